C     sigown.f -- a program with a SIGUSR1 handler of its own, which
C     OWNSET installs (sigownf.f: through gfortran's SIGNAL, after libkm
C     started; sigown.c: from a C constructor, before main): MAIN creates
C     the file "ready", calls TICK until the handler has set ICAUGHT,
C     prints "caught" and ends.  libkm must leave the handler alone: the
C     program ends normally and its results are written at END.
C     Instrumented by hand as kmrun does it; link with tick.f.
      PROGRAM OWN
      INTEGER ICAUGHT
      COMMON /OWNSIG/ ICAUGHT
      VOLATILE ICAUGHT
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 8 100000 0 OWN sigown.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL OWNSET
      OPEN(10, FILE='ready', STATUS='UNKNOWN')
      WRITE(10, *) 'ready'
      CLOSE(10)
   10 CALL TICK
      IF (ICAUGHT .EQ. 0) GOTO 10
      PRINT '(A)', 'caught'
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END
