C     tick.f -- TICK, the routine signal.f and sigmpi.f call for ever
C     (instrumented by hand as kmrun does it), and the COMMON it sums into.
      SUBROUTINE TICK
      DOUBLE PRECISION X
      COMMON /SINK/ X
      INTEGER J
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 5 100000 0 TICK tick.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      DO 20 J = 1, 1000
        X = X + SQRT(DBLE(J))
   20 CONTINUE
      CALL KM_OUT(KM_H(1))
      END

      BLOCK DATA SINKIN
      DOUBLE PRECISION X
      COMMON /SINK/ X
      DATA X /0D0/
      END
