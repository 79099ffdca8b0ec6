C     stop.f -- STOP inside an instrumented subroutine while frames are
C     open: MAIN -> CALL STOPPER(3) -> STOPPER -> DO loop -> STOP.
      PROGRAM MAIN
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 MAIN stop.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '11 9 100000 0 CALL STOPPER(3)'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      CALL STOPPER(3)
      CALL KM_OUT(KM_H(2))
      WRITE(*, *) 'not reached'
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE STOPPER(N)
      INTEGER N, I
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 20 100000 0 STOPPER stop.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '10 22 100000 0 DO 10 I = 1, 10'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      DO 10 I = 1, 10
        IF (I .EQ. N) THEN
          CALL KM_STOP
          STOP
        END IF
   10 CONTINUE
      CALL KM_OUT(KM_H(2))
      CALL KM_OUT(KM_H(1))
      RETURN
      END
