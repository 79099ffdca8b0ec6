C     recursion.f -- recursion (an extension every compiler offers),
C     instrumented by hand as kmrun does it: the function FACT calls
C     itself inside an expression, the subroutine WALK through a measured
C     CALL, and every level of both does the same work, so counting a
C     nested activation's time again would show.  MAIN calls FACT(8) and
C     WALK(8) three times each.
C     Counts: MAIN 1, FACT 24, WALK 24; WALK's CALL WALK 21.
C     Standard output: "     40320     40320".
      PROGRAM MAIN
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      INTEGER FACT, K, F, S
      EXTERNAL FACT
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 9 100000 0 MAIN recursion.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      S = 0
      DO 10 K = 1, 3
        F = FACT(8)
        CALL WALK(8, S)
   10 CONTINUE
      WRITE(*, '(2I10)') F, S
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      RECURSIVE INTEGER FUNCTION FACT(N) RESULT(R)
      INTEGER N
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '3 30 100000 0 FACT recursion.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL BUSY
      IF (N .LE. 1) THEN
        R = 1
      ELSE
        R = N * FACT(N - 1)
      END IF
      CALL KM_OUT(KM_H(1))
      END

      RECURSIVE SUBROUTINE WALK(N, S)
      INTEGER N, S
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 48 100000 0 WALK recursion.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '11 63 100000 0 CALL WALK(N - 1, S)'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL BUSY
      S = S + 1680
      IF (N .GT. 1) THEN
        CALL KM_IN(KM_H(2))
        CALL WALK(N - 1, S)
        CALL KM_OUT(KM_H(2))
      END IF
      CALL KM_OUT(KM_H(1))
      END

C     Not instrumented: its time is its caller's net time.
      SUBROUTINE BUSY
      DOUBLE PRECISION X
      COMMON /SINK/ X
      INTEGER J
      DO 20 J = 1, 20000
        X = X + SQRT(DBLE(J))
   20 CONTINUE
      END

      BLOCK DATA SINKIN
      DOUBLE PRECISION X
      COMMON /SINK/ X
      DATA X /0D0/
      END
