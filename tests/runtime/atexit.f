C     atexit.f -- the program ends in QUIT, a routine kmrun never saw
C     (its STOP has no KM_STOP), after PRNT (a PRINT_OUT routine) wrote
C     once: the atexit handler writes the final figures into the same file.
      PROGRAM MAIN
      INTEGER*4 KM_H(2)
      SAVE KM_H
      DATA KM_H /2*0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 MAIN atexit.f'//CHAR(0))
        CALL KM_REG(KM_H(2), KM_H(1),
     &    '11 14 100000 0 CALL QUIT'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL PRNT
      CALL KM_IN(KM_H(2))
      CALL QUIT
      CALL KM_OUT(KM_H(2))
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE PRNT
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 30 100000 0 PRNT atexit.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_WRIT
      CALL KM_OUT(KM_H(1))
      RETURN
      END

      SUBROUTINE QUIT
      STOP
      END
