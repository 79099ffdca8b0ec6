C     mpi.f -- an MPI program instrumented by hand as kmrun does it:
C     MPI calls measured as locations, KM_MPII after MPI_INIT, KM_MPIF
C     before MPI_FINALIZE (inside its frame), a PRINT_OUT routine called
C     while MPI runs, set-up work every rank repeats in a region declared
C     redundant (flag 2, as kmrun writes a !KM_redundant region).  WORK's
C     load grows with the rank.
C     Counts on every rank: PMAIN 1, WORK 5, PRNT 1; MPI_INIT 1,
C     MPI_COMM_RANK 1, USER 1, DO 1, MPI_ALLREDUCE 5, MPI_FINALIZE 1; in WORK,
C     MPI_BARRIER 5.  Rank 0 prints N(N-1)/2 + 5N for N ranks.
      PROGRAM PMAIN
      INCLUDE 'mpif.h'
      INTEGER*4 KM_H(7)
      SAVE KM_H
      DATA KM_H /7*0/
      INTEGER IERR, RANK, K
      DOUBLE PRECISION A, B, X
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 PMAIN mpi.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '12 10 100000 0 CALL MPI_INIT(IERR)'//CHAR(0))
        CALL KM_REG(KM_H(3), KM_H(1),
     &    '12 11 100000 0 CALL MPI_COMM_RANK(MPI_COMM_WORLD, '//
     &    'RANK, IERR)'//CHAR(0))
        CALL KM_REG(KM_H(4), KM_H(1),
     &    '10 13 100000 0 DO 10 K = 1, 5'//CHAR(0))
        CALL KM_REG(KM_H(5), KM_H(1),
     &    '12 15 100000 0 CALL MPI_ALLREDUCE(A, B, 1, '//
     &    'MPI_DOUBLE_PRECISION, MPI_SUM,'//CHAR(0))
        CALL KM_REG(KM_H(6), KM_H(1),
     &    '12 20 100000 0 CALL MPI_FINALIZE(IERR)'//CHAR(0))
        CALL KM_REG(KM_H(7), KM_H(1),
     &    '14 12 100000 2 !KM_redundant start'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      CALL MPI_INIT(IERR)
      CALL KM_OUT(KM_H(2))
      CALL KM_MPII
      CALL KM_IN(KM_H(3))
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL KM_OUT(KM_H(3))
      CALL KM_IN(KM_H(7))
      X = 0
      DO 5 K = 1, 300000
        X = X + SQRT(DBLE(K))
    5 CONTINUE
      B = 0 * X
      CALL KM_OUT(KM_H(7))
      CALL KM_IN(KM_H(4))
      DO 10 K = 1, 5
        CALL WORK(RANK, K, A)
        CALL KM_IN(KM_H(5))
        CALL MPI_ALLREDUCE(A, B, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &    MPI_COMM_WORLD, IERR)
        CALL KM_OUT(KM_H(5))
   10 CONTINUE
      CALL KM_OUT(KM_H(4))
      IF (RANK .EQ. 0) WRITE(*, '(F12.1)') B
      CALL PRNT
      CALL KM_IN(KM_H(6))
      CALL KM_MPIF
      CALL MPI_FINALIZE(IERR)
      CALL KM_OUT(KM_H(6))
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE WORK(RANK, K, A)
      INCLUDE 'mpif.h'
      INTEGER RANK, K, J, IERR
      DOUBLE PRECISION A, X
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 40 100000 0 WORK mpi.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '12 47 100000 0 CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)'
     &    //CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      X = 0
      DO 20 J = 1, 20000 * (RANK + 1)
        X = X + SQRT(DBLE(J))
   20 CONTINUE
      A = RANK + K + 0 * X
      CALL KM_IN(KM_H(2))
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL KM_OUT(KM_H(2))
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      SUBROUTINE PRNT
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 60 100000 0 PRNT mpi.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_WRIT
      CALL KM_OUT(KM_H(1))
      RETURN
      END
