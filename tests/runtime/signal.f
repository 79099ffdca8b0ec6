C     signal.f -- a program that never ends by itself: MAIN calls SPIN,
C     which creates the file "ready" and then calls TICK for ever, so only
C     a signal stops it.  Instrumented by hand as kmrun does it; link
C     with tick.f.
C     Counts when stopped: MAIN 1, SPIN 1, TICK >= 1.
      PROGRAM MAIN
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 5 100000 0 MAIN signal.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL SPIN
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE SPIN
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 19 100000 0 SPIN signal.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      OPEN(10, FILE='ready', STATUS='UNKNOWN')
      WRITE(10, *) 'ready'
      CLOSE(10)
   10 CALL TICK
      GOTO 10
      END
