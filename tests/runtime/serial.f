C     serial.f -- a serial program instrumented by hand the way kmrun
C     does it.  MAIN: a measured DO loop calling SUB1 and the function F
C     (inside an expression), a measured CALL of SUB1, a measured WRITE,
C     two calls of PRNT (a PRINT_OUT routine).  SUB1 loops over SUB2.
C     Counts: MAIN 1, SUB1 4, SUB2 4000, F 3, PRNT 2.
C     Standard output: one line, "      12.0".
      PROGRAM MAIN
      INTEGER*4 KM_H(4)
      SAVE KM_H
      DATA KM_H /4*0/
      INTEGER I, N
      DOUBLE PRECISION S, F
      EXTERNAL F
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 MAIN serial.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '10 20 100000 0 DO 10 I = 1, 3'//CHAR(0))
        CALL KM_REG(KM_H(3), KM_H(1),
     &    '11 24 100000 0 CALL SUB1(N)'//CHAR(0))
        CALL KM_REG(KM_H(4), KM_H(1),
     &    '13 25 100000 0 WRITE(*, ''(F10.1)'') S'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      N = 1000
      S = 0
      CALL KM_IN(KM_H(2))
      DO 10 I = 1, 3
        CALL SUB1(N)
        S = S + F(I)
   10 CONTINUE
      CALL KM_OUT(KM_H(2))
      CALL KM_IN(KM_H(3))
      CALL SUB1(N)
      CALL KM_OUT(KM_H(3))
      CALL KM_IN(KM_H(4))
      WRITE(*, '(F10.1)') S
      CALL KM_OUT(KM_H(4))
      CALL PRNT
      CALL PRNT
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE SUB1(N)
      INTEGER N, J
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 40 100000 0 SUB1 serial.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '10 43 100000 0 DO 20 J = 1, N'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_IN(KM_H(2))
      DO 20 J = 1, N
        CALL SUB2(J)
   20 CONTINUE
      CALL KM_OUT(KM_H(2))
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      SUBROUTINE SUB2(J)
      INTEGER J
      DOUBLE PRECISION X
      COMMON /ACC/ X
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 60 100000 0 SUB2 serial.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      X = X + SQRT(DBLE(J))
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      DOUBLE PRECISION FUNCTION F(I)
      INTEGER I
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '3 70 100000 0 F serial.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      F = 2 * I
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      SUBROUTINE PRNT
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 80 100000 0 PRNT serial.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_WRIT
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      BLOCK DATA ACCINI
      DOUBLE PRECISION X
      COMMON /ACC/ X
      DATA X /0D0/
      END
