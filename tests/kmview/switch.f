C     switch.f — issue 28: call paths that an input changes.  The file
C     switch.in gives NA and NB: A calls C NA times a call, B calls it NB
C     times, each twice from a loop of its own in the main program; A is
C     also called with N = 100 from B's loop (the same in both runs), so
C     that A is reached through two loops; D is called only when NB > NA.
C     Run with "200 2" and then "2 200", the paths of C under A's loop and
C     under B trade their counts; C costs about 0.1 ms a call.
      PROGRAM PSWTCH
      INTEGER NA, NB, I
      DOUBLE PRECISION S
      OPEN (10, FILE='switch.in', STATUS='OLD')
      READ (10, *) NA, NB
      CLOSE (10)
      S = 0
      DO 10 I = 1, 2
         CALL A(S, NA)
   10 CONTINUE
      DO 20 I = 1, 2
         CALL B(S, NB)
         CALL A(S, 100)
   20 CONTINUE
      IF (NB .GT. NA) CALL D(S)
      WRITE (*, '(F20.3)') S
      END

      SUBROUTINE A(S, N)
      DOUBLE PRECISION S
      INTEGER N, J
      DO 30 J = 1, N
         CALL C(S)
   30 CONTINUE
      END

      SUBROUTINE B(S, N)
      DOUBLE PRECISION S
      INTEGER N, J
      DO 40 J = 1, N
         CALL C(S)
   40 CONTINUE
      END

      SUBROUTINE C(S)
      DOUBLE PRECISION S
      INTEGER K
      DO 50 K = 1, 100000
         S = S + 1D-6 * MOD(K, 7)
   50 CONTINUE
      END

      SUBROUTINE D(S)
      DOUBLE PRECISION S
      S = S + 1
      END
