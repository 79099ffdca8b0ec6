C     kernel.f -- a call-heavy kernel for bench/runtime.sh: an explicit
C     2-D finite-volume step on an N x N grid of cells, where every cell
C     and step calls the function PRESS (an equation of state, inside an
C     expression) and the subroutine FLUX (cell.f, a separate file as in
C     most old codes, so that neither build inlines them): 2 calls of a
C     few dozen floating-point operations per cell and step, 2 * N * N *
C     NSTEP calls in all.  Prints a checksum.
      PROGRAM KERNEL
      INTEGER N, NSTEP
      PARAMETER (N = 400, NSTEP = 100)
      DOUBLE PRECISION RHO(N, N), E(N, N), F(N, N), PRESS, S
      INTEGER I, J, K
      EXTERNAL PRESS
      DO 20 J = 1, N
        DO 10 I = 1, N
          RHO(I, J) = 1.0D0 + 0.1D0 * SIN(0.01D0 * I * J)
          E(I, J) = 2.5D0 + 0.05D0 * COS(0.02D0 * (I + J))
   10   CONTINUE
   20 CONTINUE
      DO 60 K = 1, NSTEP
        DO 40 J = 2, N - 1
          DO 30 I = 2, N - 1
            CALL FLUX(RHO(I - 1, J), RHO(I + 1, J), E(I, J - 1),
     &                E(I, J + 1), PRESS(RHO(I, J), E(I, J)), F(I, J))
   30     CONTINUE
   40   CONTINUE
        CALL UPDATE(RHO, E, F, N)
   60 CONTINUE
      S = 0
      DO 80 J = 1, N
        DO 70 I = 1, N
          S = S + RHO(I, J) + E(I, J)
   70   CONTINUE
   80 CONTINUE
      WRITE(*, '(A, F20.10)') 'checksum', S
      END

      SUBROUTINE UPDATE(RHO, E, F, N)
      INTEGER N, I, J
      DOUBLE PRECISION RHO(N, N), E(N, N), F(N, N)
      DO 20 J = 2, N - 1
        DO 10 I = 2, N - 1
          RHO(I, J) = RHO(I, J) - 1.0D-4 * F(I, J)
          E(I, J) = E(I, J) + 1.0D-4 * F(I, J)
   10   CONTINUE
   20 CONTINUE
      END
