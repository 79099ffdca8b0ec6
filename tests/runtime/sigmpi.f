C     sigmpi.f -- an MPI program that never ends by itself: after
C     MPI_INIT every rank creates the file "ready.<rank>" and calls TICK
C     for ever, so only a signal (from mpirun, say) stops it.
C     Instrumented by hand as kmrun does it; link with tick.f.
C     Counts when stopped, on every rank: MPMAIN 1, TICK >= 1.
      PROGRAM MPMAIN
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK
      CHARACTER*16 NAME
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 6 100000 0 MPMAIN sigmpi.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '12 23 100000 0 CALL MPI_INIT(IERR)'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      CALL MPI_INIT(IERR)
      CALL KM_OUT(KM_H(2))
      CALL KM_MPII
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      WRITE(NAME, '(A, I0)') 'ready.', RANK
      OPEN(10, FILE=NAME, STATUS='UNKNOWN')
      WRITE(10, *) 'ready'
      CLOSE(10)
   10 CALL TICK
      GOTO 10
      END
