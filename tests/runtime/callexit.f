C     callexit.f -- CALL EXIT(3) (an extension) in an instrumented
C     subroutine: KM_EXIT writes, the exit status stays 3.
      PROGRAM MAIN
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '1 1 100000 0 MAIN callexit.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL BYE
      CALL KM_OUT(KM_H(1))
      CALL KM_END
      END

      SUBROUTINE BYE
      INTEGER*4 KM_H(1)
      SAVE KM_H
      DATA KM_H /0/
      IF (KM_H(1) .EQ. 0) THEN
        CALL KM_REG(KM_H(1), KM_H(1),
     &    '2 20 100000 0 BYE callexit.f'//CHAR(0))
      END IF
      CALL KM_IN(KM_H(1))
      CALL KM_EXIT
      CALL EXIT(3)
      CALL KM_OUT(KM_H(1))
      RETURN
      END
