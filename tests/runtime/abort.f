C     abort.f -- a program that stops itself: MAIN calls BOOM with its
C     first argument, which then ends the program as it says: "abort"
C     (CALL ABORT, after KM_ABOR: gfortran's runtime puts SIGABRT back
C     to its default first), "assert" (a failed C assert: SIGABRT) or
C     "quick" (C's quick_exit(3), which runs no atexit handler).
C     Instrumented by hand as kmrun does it; link with abortc.c.
C     Counts when it stops: MAIN 1, BOOM 1.
      PROGRAM MAIN
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      CHARACTER*8 HOW
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 7 100000 0 MAIN abort.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL GETARG(1, HOW)
      CALL BOOM(HOW)
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE BOOM(HOW)
      CHARACTER*(*) HOW
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 23 100000 0 BOOM abort.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      WRITE(*, '(A)') 'stopping: '//HOW
      FLUSH(6)
      IF (HOW .EQ. 'abort') THEN
        CALL KM_ABOR
        CALL ABORT
      END IF
      IF (HOW .EQ. 'assert') CALL KMTASSERT
      IF (HOW .EQ. 'quick') CALL KMTQUICK
      CALL KM_OUT(KM_H(1))
      END
