C     trace.f -- a program instrumented by hand as kmrun does it with
C     TRACE_FILE_NUMBER > 0 (flag 1 in every registration).  It reads a
C     number from standard input: 0, it calls LEAF 50 times through OUTER
C     and ends; 1, after that it creates the file "ready" and loops for
C     ever inside STUCK, called from OUTER, so that the trace must show
C     where it hangs; 2, it calls OUTER 1000 times (104,002 events).
      PROGRAM MAIN
      INTEGER MODE, I
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 7 100000 1 MAIN trace.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      READ(*, *) MODE
      IF (MODE .EQ. 2) THEN
        DO 20 I = 1, 1000
          CALL OUTER(0)
   20   CONTINUE
      ELSE
        CALL OUTER(MODE)
      END IF
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE OUTER(MODE)
      INTEGER MODE, K
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 23 100000 1 OUTER trace.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '10 33 100000 1 DO 10 K = 1, 50'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      DO 10 K = 1, 50
        CALL LEAF
   10 CONTINUE
      CALL KM_OUT(KM_H(2))
      IF (MODE .EQ. 1) CALL STUCK
      CALL KM_OUT(KM_H(1))
      END

      SUBROUTINE LEAF
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 45 100000 1 LEAF trace.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_OUT(KM_H(1))
      END

      SUBROUTINE STUCK
      DOUBLE PRECISION X
      INTEGER J
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 57 100000 1 STUCK trace.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      OPEN(10, FILE='ready', STATUS='UNKNOWN')
      WRITE(10, *) 'ready'
      CLOSE(10)
      X = 0
      J = 0
   20 J = J + 1
      X = X + SQRT(DBLE(J))
      IF (X .GE. 0) GOTO 20
      CALL KM_OUT(KM_H(1))
      END
