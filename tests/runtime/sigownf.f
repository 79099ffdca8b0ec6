C     sigownf.f -- OWNSET for sigown.f: SIGUSR1 (10 on Linux) handled by
C     ONUSR1 through gfortran's SIGNAL intrinsic.  The handler gets the
C     signal's number by value, and only sets the flag.
      SUBROUTINE OWNSET
      EXTERNAL ONUSR1
      INTEGER ISTAT
      CALL SIGNAL(10, ONUSR1, ISTAT)
      END

      SUBROUTINE ONUSR1(SIG)
      INTEGER, VALUE :: SIG
      INTEGER ICAUGHT
      COMMON /OWNSIG/ ICAUGHT
      VOLATILE ICAUGHT
      ICAUGHT = 1
      END
