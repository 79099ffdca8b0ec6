C     mpistop.f -- every rank STOPs while MPI is initialised (no
C     MPI_FINALIZE): each writes its own section to its own file.  The
C     barrier after KM_STOP (not what kmrun generates) only keeps mpirun
C     from killing a rank that is still writing when another exits.
      PROGRAM PSTOP
      INCLUDE 'mpif.h'
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      INTEGER IERR
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 PSTOP mpistop.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '12 10 100000 0 CALL MPI_INIT(IERR)'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      CALL MPI_INIT(IERR)
      CALL KM_OUT(KM_H(2))
      CALL KM_MPII
      CALL KM_STOP
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      STOP
      END
