C     otf2.f -- the MPI program whose trace kmview turns into OTF2
C     (tests/kmview/otf2.test): on every rank NSTEP = 5 ring steps, each
C     an MPI_ISEND of 80 bytes to the right (tag I), an MPI_RECV from the
C     left and an MPI_WAIT, then one MPI_SENDRECV (4 bytes, tag 99), then
C     MPI_BCAST, MPI_ALLREDUCE and MPI_BARRIER: 6 messages sent and 6
C     received, 3 collectives.  With a file 'hang' present every rank
C     then waits in STUCK for a message nobody sends, to be killed.
      PROGRAM OTF2P
      INCLUDE 'mpif.h'
      INTEGER NSTEP
      PARAMETER (NSTEP = 5)
      INTEGER IERR, RANK, NPROC, I
      LOGICAL HANG
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROC, IERR)
      DO 10 I = 1, NSTEP
         CALL STEP(RANK, NPROC, I)
   10 CONTINUE
      CALL COLL(RANK)
      INQUIRE(FILE='hang', EXIST=HANG)
      IF (HANG) CALL STUCK(RANK)
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE STEP(RANK, NPROC, I)
      INCLUDE 'mpif.h'
      INTEGER RANK, NPROC, I, RIGHT, LEFT, REQ, IERR
      INTEGER STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION A(10), B(10)
      RIGHT = MOD(RANK + 1, NPROC)
      LEFT = MOD(RANK + NPROC - 1, NPROC)
      A(1) = RANK + I
      CALL MPI_ISEND(A, 10, MPI_DOUBLE_PRECISION, RIGHT, I,
     &               MPI_COMM_WORLD, REQ, IERR)
      CALL MPI_RECV(B, 10, MPI_DOUBLE_PRECISION, LEFT, I,
     &              MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_WAIT(REQ, STATUS, IERR)
      END

      SUBROUTINE COLL(RANK)
      INCLUDE 'mpif.h'
      INTEGER RANK, IERR, RIGHT, LEFT, NPROC, X, Y
      INTEGER STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION S, T
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROC, IERR)
      RIGHT = MOD(RANK + 1, NPROC)
      LEFT = MOD(RANK + NPROC - 1, NPROC)
      X = RANK
      CALL MPI_SENDRECV(X, 1, MPI_INTEGER, RIGHT, 99,
     &                  Y, 1, MPI_INTEGER, LEFT, 99,
     &                  MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_BCAST(X, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      S = RANK
      CALL MPI_ALLREDUCE(S, T, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      END

      SUBROUTINE STUCK(RANK)
      INCLUDE 'mpif.h'
      INTEGER RANK, IERR
      INTEGER STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION X
      CALL MPI_RECV(X, 1, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 7,
     &              MPI_COMM_WORLD, STATUS, IERR)
      END
