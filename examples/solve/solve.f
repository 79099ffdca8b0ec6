C     solve.f -- a serial example: build a diagonally dominant N x N
C     system whose solution is known (all ones), solve it by Gaussian
C     elimination with partial pivoting, refine it once, and report the
C     error.  Repeated NREP times so that there is something to measure.
C
C     kmtool's serial example: subroutines and functions, nested DO
C     loops, a function called inside an expression, and file I/O.
      PROGRAM SOLVE
      INTEGER MAXN
      PARAMETER (MAXN = 300)
      DOUBLE PRECISION A(MAXN, MAXN), LU(MAXN, MAXN)
      DOUBLE PRECISION B(MAXN), X(MAXN), R(MAXN)
      DOUBLE PRECISION ERR, ERRMAX, ERRNRM
      INTEGER IPIV(MAXN), N, NREP, K, INFO
      N = 200
      NREP = 5
      ERRMAX = 0.0D0
      DO 10 K = 1, NREP
         CALL BUILD(A, MAXN, N, K)
         CALL RHS(A, MAXN, N, B)
         CALL LUFACT(A, LU, MAXN, N, IPIV, INFO)
         IF (INFO .NE. 0) THEN
            WRITE (*, *) 'singular matrix, pivot ', INFO
            STOP 1
         END IF
         CALL LUSOLV(LU, MAXN, N, IPIV, B, X)
         CALL REFINE(A, LU, MAXN, N, IPIV, B, X, R)
         ERR = ERRNRM(X, N)
         ERRMAX = MAX(ERRMAX, ERR)
   10 CONTINUE
      WRITE (*, 900) N, NREP, ERRMAX .LT. 1.0D-10
      CALL SAVEX(X, N)
  900 FORMAT (' solved ', I4, ' x ', I4, ' systems;',
     &        ' error below 1e-10: ', L1)
      END
C
C     A(i,j) = 1/(i+j+k) off the diagonal, dominant on it.
      SUBROUTINE BUILD(A, LDA, N, K)
      INTEGER LDA, N, K, I, J
      DOUBLE PRECISION A(LDA, *), ROWSUM
      DO 20 J = 1, N
         DO 10 I = 1, N
            A(I, J) = 1.0D0 / DBLE(I + J + K)
   10    CONTINUE
   20 CONTINUE
      DO 30 I = 1, N
         A(I, I) = ROWSUM(A, LDA, N, I) + 1.0D0
   30 CONTINUE
      END
C
      DOUBLE PRECISION FUNCTION ROWSUM(A, LDA, N, I)
      INTEGER LDA, N, I, J
      DOUBLE PRECISION A(LDA, *)
      ROWSUM = 0.0D0
      DO 10 J = 1, N
         ROWSUM = ROWSUM + ABS(A(I, J))
   10 CONTINUE
      END
C
C     B = A * (1, 1, ..., 1)
      SUBROUTINE RHS(A, LDA, N, B)
      INTEGER LDA, N, I, J
      DOUBLE PRECISION A(LDA, *), B(*)
      DO 10 I = 1, N
         B(I) = 0.0D0
   10 CONTINUE
      DO 30 J = 1, N
         DO 20 I = 1, N
            B(I) = B(I) + A(I, J)
   20    CONTINUE
   30 CONTINUE
      END
C
C     LU = P A, with the row interchanges in IPIV.
      SUBROUTINE LUFACT(A, LU, LDA, N, IPIV, INFO)
      INTEGER LDA, N, IPIV(*), INFO, I, J, K, P
      DOUBLE PRECISION A(LDA, *), LU(LDA, *), T
      INFO = 0
      DO 20 J = 1, N
         DO 10 I = 1, N
            LU(I, J) = A(I, J)
   10    CONTINUE
   20 CONTINUE
      DO 60 K = 1, N
         P = K
         DO 30 I = K + 1, N
            IF (ABS(LU(I, K)) .GT. ABS(LU(P, K))) P = I
   30    CONTINUE
         IPIV(K) = P
         IF (LU(P, K) .EQ. 0.0D0) THEN
            INFO = K
            RETURN
         END IF
         IF (P .NE. K) THEN
            DO 40 J = 1, N
               T = LU(K, J)
               LU(K, J) = LU(P, J)
               LU(P, J) = T
   40       CONTINUE
         END IF
         DO 50 I = K + 1, N
            LU(I, K) = LU(I, K) / LU(K, K)
   50    CONTINUE
         CALL RANK1(LU(K+1, K), LU(K, K+1), LU(K+1, K+1), LDA, N - K)
   60 CONTINUE
      END
C
C     C = C - x y' on the trailing M x M block.
      SUBROUTINE RANK1(X, Y, C, LDA, M)
      INTEGER LDA, M, I, J
      DOUBLE PRECISION X(*), Y(LDA, *), C(LDA, *)
      DO 20 J = 1, M
         DO 10 I = 1, M
            C(I, J) = C(I, J) - X(I) * Y(1, J)
   10    CONTINUE
   20 CONTINUE
      END
C
      SUBROUTINE LUSOLV(LU, LDA, N, IPIV, B, X)
      INTEGER LDA, N, IPIV(*), I, J
      DOUBLE PRECISION LU(LDA, *), B(*), X(*), T
      DO 10 I = 1, N
         X(I) = B(I)
   10 CONTINUE
      DO 20 I = 1, N
         T = X(I)
         X(I) = X(IPIV(I))
         X(IPIV(I)) = T
   20 CONTINUE
      DO 40 J = 1, N
         DO 30 I = J + 1, N
            X(I) = X(I) - LU(I, J) * X(J)
   30    CONTINUE
   40 CONTINUE
      DO 60 J = N, 1, -1
         X(J) = X(J) / LU(J, J)
         DO 50 I = 1, J - 1
            X(I) = X(I) - LU(I, J) * X(J)
   50    CONTINUE
   60 CONTINUE
      END
C
C     One step of iterative refinement: R = B - A X, solve, correct.
      SUBROUTINE REFINE(A, LU, LDA, N, IPIV, B, X, R)
      INTEGER LDA, N, IPIV(*), I, J
      DOUBLE PRECISION A(LDA, *), LU(LDA, *), B(*), X(*), R(*)
      DOUBLE PRECISION D(300)
      DO 20 I = 1, N
         R(I) = B(I)
         DO 10 J = 1, N
            R(I) = R(I) - A(I, J) * X(J)
   10    CONTINUE
   20 CONTINUE
      CALL LUSOLV(LU, LDA, N, IPIV, R, D)
      DO 30 I = 1, N
         X(I) = X(I) + D(I)
   30 CONTINUE
      END
C
C     The largest distance of X from the exact solution (all ones).
      DOUBLE PRECISION FUNCTION ERRNRM(X, N)
      INTEGER N, I
      DOUBLE PRECISION X(*)
      ERRNRM = 0.0D0
      DO 10 I = 1, N
         ERRNRM = MAX(ERRNRM, ABS(X(I) - 1.0D0))
   10 CONTINUE
      END
C
      SUBROUTINE SAVEX(X, N)
      INTEGER N, I
      DOUBLE PRECISION X(*)
      OPEN (UNIT=21, FILE='solve.out', STATUS='UNKNOWN')
      WRITE (21, '(I5, F20.15)') (I, X(I), I = 1, N)
      CLOSE (21)
      END
