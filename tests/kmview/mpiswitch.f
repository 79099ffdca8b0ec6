C     mpiswitch.f — issue 28: ranks that take different paths.  Every
C     rank calls C 1000 times, the even ranks through A, the odd ones
C     through B (C costs about 0.1 ms a call), then all of them reduce
C     once through SUMUP: on 4 ranks, {0,2} and {1,3} differ by where
C     nearly all their time goes.
      PROGRAM MSWTCH
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK
      DOUBLE PRECISION S, TOTAL
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      S = 0
      IF (MOD(RANK, 2) .EQ. 0) THEN
         CALL A(S)
      ELSE
         CALL B(S)
      END IF
      CALL SUMUP(S, TOTAL)
      IF (RANK .EQ. 0) WRITE (*, '(F20.3)') TOTAL
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE A(S)
      DOUBLE PRECISION S
      INTEGER J
      DO 30 J = 1, 1000
         CALL C(S)
   30 CONTINUE
      END

      SUBROUTINE B(S)
      DOUBLE PRECISION S
      INTEGER J
      DO 40 J = 1, 1000
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

      SUBROUTINE SUMUP(S, TOTAL)
      INCLUDE 'mpif.h'
      DOUBLE PRECISION S, TOTAL
      INTEGER IERR
      CALL MPI_ALLREDUCE(S, TOTAL, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      END
