C     heat.f -- steady 2-D heat conduction on the unit square, solved by
C     Jacobi iteration with MPI.  The NX x NY interior grid is cut into
C     blocks of columns, one per rank; each sweep first swaps the halo
C     columns with the two neighbours (MPI_SENDRECV), and every NCHECK
C     sweeps the ranks agree on the largest change (MPI_ALLREDUCE).
C     Rank 0 reads heat.in and broadcasts it, and at the end gathers
C     the column sums (MPI_GATHERV) so that the printed checksum does
C     not depend on the number of ranks, and writes heat.out.
C
C     kmtool's bundled example: several subroutines and a function,
C     loops, point-to-point and collective MPI, and file I/O.
      PROGRAM HEAT
      INCLUDE 'mpif.h'
      INTEGER MAXX, MAXY
      PARAMETER (MAXX = 512, MAXY = 512)
      DOUBLE PRECISION U(0:MAXX+1, 0:MAXY+1), UNEW(0:MAXX+1, 0:MAXY+1)
      DOUBLE PRECISION TOL, DIFF, GDIFF, CHANGE
      INTEGER NX, NY, NITER, NCHECK, IT, NLOC, J1
      INTEGER RANK, NPROC, IERR
      EXTERNAL CHANGE
C
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROC, IERR)
      CALL READIN(NX, NY, NITER, NCHECK, TOL, RANK)
      IF (NX .GT. MAXX .OR. NY .GT. MAXY .OR. NY .LT. NPROC) THEN
         IF (RANK .EQ. 0) WRITE (*, '(A)') 'heat: bad grid size'
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      CALL DECOMP(NY, RANK, NPROC, J1, NLOC)
      CALL INIT(U, NX, NLOC, J1, NY)
      CALL INIT(UNEW, NX, NLOC, J1, NY)
C
      GDIFF = 0.0D0
      DO 100 IT = 1, NITER
         CALL EXCHNG(U, NX, NLOC, RANK, NPROC)
         CALL SWEEP(U, UNEW, NX, NLOC)
         IF (MOD(IT, NCHECK) .EQ. 0) THEN
            DIFF = CHANGE(U, UNEW, NX, NLOC)
            CALL MPI_ALLREDUCE(DIFF, GDIFF, 1, MPI_DOUBLE_PRECISION,
     &                         MPI_MAX, MPI_COMM_WORLD, IERR)
            IF (RANK .EQ. 0) WRITE (*, 900) IT, GDIFF
            IF (GDIFF .LT. TOL) GO TO 200
         END IF
         CALL COPY(UNEW, U, NX, NLOC)
  100 CONTINUE
      IT = NITER
  200 CONTINUE
      CALL REPORT(U, NX, NY, NLOC, RANK, NPROC, IT)
      CALL MPI_FINALIZE(IERR)
  900 FORMAT (' sweep ', I6, '   largest change ', 1P, E12.5)
      END
C
C     Rank 0 reads the problem from heat.in; every rank gets it.
      SUBROUTINE READIN(NX, NY, NITER, NCHECK, TOL, RANK)
      INCLUDE 'mpif.h'
      INTEGER NX, NY, NITER, NCHECK, RANK, IERR
      DOUBLE PRECISION TOL, BUF(5)
      IF (RANK .EQ. 0) THEN
         OPEN (UNIT=11, FILE='heat.in', STATUS='OLD', ERR=90)
         READ (11, *, ERR=90, END=90) NX, NY
         READ (11, *, ERR=90, END=90) NITER, NCHECK
         READ (11, *, ERR=90, END=90) TOL
         CLOSE (11)
         BUF(1) = NX
         BUF(2) = NY
         BUF(3) = NITER
         BUF(4) = NCHECK
         BUF(5) = TOL
      END IF
C     One broadcast, of one type: the integers travel as doubles.
      CALL MPI_BCAST(BUF, 5, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &               IERR)
      NX = NINT(BUF(1))
      NY = NINT(BUF(2))
      NITER = NINT(BUF(3))
      NCHECK = NINT(BUF(4))
      TOL = BUF(5)
      RETURN
   90 WRITE (*, '(A)') 'heat: cannot read heat.in'
      CALL MPI_ABORT(MPI_COMM_WORLD, 2, IERR)
      END
C
C     Columns J1 .. J1+NLOC-1 of 1 .. NY belong to this rank.
      SUBROUTINE DECOMP(NY, RANK, NPROC, J1, NLOC)
      INTEGER NY, RANK, NPROC, J1, NLOC, NBASE, NEXTRA
      NBASE = NY / NPROC
      NEXTRA = MOD(NY, NPROC)
      NLOC = NBASE
      IF (RANK .LT. NEXTRA) NLOC = NLOC + 1
      J1 = RANK * NBASE + MIN(RANK, NEXTRA) + 1
      END
C
C     Zero inside; the edge y = 0 is held at 100 degrees, x = 0 at
C     50, the others at 0.  Column 0 and NLOC+1 are halos, except at
C     the ends of the domain, where they are the boundary.
      SUBROUTINE INIT(U, NX, NLOC, J1, NY)
      INTEGER MAXX
      PARAMETER (MAXX = 512)
      INTEGER NX, NLOC, J1, NY, I, J
      DOUBLE PRECISION U(0:MAXX+1, 0:*)
      DO 20 J = 0, NLOC + 1
         DO 10 I = 0, NX + 1
            U(I, J) = 0.0D0
   10    CONTINUE
         U(0, J) = 50.0D0
   20 CONTINUE
      IF (J1 .EQ. 1) THEN
         DO 30 I = 1, NX
            U(I, 0) = 100.0D0
   30    CONTINUE
      END IF
      IF (J1 + NLOC - 1 .EQ. NY) THEN
         DO 40 I = 1, NX
            U(I, NLOC + 1) = 0.0D0
   40    CONTINUE
      END IF
      END
C
C     Swap halo columns with the left and right neighbours.
      SUBROUTINE EXCHNG(U, NX, NLOC, RANK, NPROC)
      INCLUDE 'mpif.h'
      INTEGER MAXX
      PARAMETER (MAXX = 512)
      INTEGER NX, NLOC, RANK, NPROC, LEFT, RIGHT, IERR
      INTEGER STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION U(0:MAXX+1, 0:*)
      LEFT = RANK - 1
      RIGHT = RANK + 1
      IF (LEFT .LT. 0) LEFT = MPI_PROC_NULL
      IF (RIGHT .GE. NPROC) RIGHT = MPI_PROC_NULL
      CALL MPI_SENDRECV(U(1, NLOC), NX, MPI_DOUBLE_PRECISION, RIGHT, 1,
     &                  U(1, 0), NX, MPI_DOUBLE_PRECISION, LEFT, 1,
     &                  MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_SENDRECV(U(1, 1), NX, MPI_DOUBLE_PRECISION, LEFT, 2,
     &                  U(1, NLOC+1), NX, MPI_DOUBLE_PRECISION, RIGHT,
     &                  2,
     &                  MPI_COMM_WORLD, STATUS, IERR)
      END
C
C     One Jacobi sweep: UNEW is the mean of U's four neighbours.
      SUBROUTINE SWEEP(U, UNEW, NX, NLOC)
      INTEGER MAXX
      PARAMETER (MAXX = 512)
      INTEGER NX, NLOC, I, J
      DOUBLE PRECISION U(0:MAXX+1, 0:*), UNEW(0:MAXX+1, 0:*)
      DO 20 J = 1, NLOC
         DO 10 I = 1, NX
            UNEW(I, J) = 0.25D0 * (U(I-1, J) + U(I+1, J)
     &                           + U(I, J-1) + U(I, J+1))
   10    CONTINUE
   20 CONTINUE
      END
C
C     The largest change of this sweep on this rank.
      DOUBLE PRECISION FUNCTION CHANGE(U, UNEW, NX, NLOC)
      INTEGER MAXX
      PARAMETER (MAXX = 512)
      INTEGER NX, NLOC, I, J
      DOUBLE PRECISION U(0:MAXX+1, 0:*), UNEW(0:MAXX+1, 0:*)
      CHANGE = 0.0D0
      DO 20 J = 1, NLOC
         DO 10 I = 1, NX
            CHANGE = MAX(CHANGE, ABS(UNEW(I, J) - U(I, J)))
   10    CONTINUE
   20 CONTINUE
      END
C
      SUBROUTINE COPY(FROM, TO, NX, NLOC)
      INTEGER MAXX
      PARAMETER (MAXX = 512)
      INTEGER NX, NLOC, I, J
      DOUBLE PRECISION FROM(0:MAXX+1, 0:*), TO(0:MAXX+1, 0:*)
      DO 20 J = 1, NLOC
         DO 10 I = 1, NX
            TO(I, J) = FROM(I, J)
   10    CONTINUE
   20 CONTINUE
      END
C
C     Column sums, gathered in order on rank 0, give a checksum that is
C     the same on any number of ranks; rank 0 also writes the middle
C     row of the solution to heat.out.
      SUBROUTINE REPORT(U, NX, NY, NLOC, RANK, NPROC, NITER)
      INCLUDE 'mpif.h'
      INTEGER MAXX, MAXY, MAXP
      PARAMETER (MAXX = 512, MAXY = 512, MAXP = 1024)
      INTEGER NX, NY, NLOC, RANK, NPROC, NITER, I, J, IERR
      INTEGER COUNTS(MAXP), DISPLS(MAXP)
      DOUBLE PRECISION U(0:MAXX+1, 0:*), COLSUM(MAXY), ALL(MAXY), TOTAL
      DOUBLE PRECISION ROW(MAXY)
      DO 20 J = 1, NLOC
         COLSUM(J) = 0.0D0
         DO 10 I = 1, NX
            COLSUM(J) = COLSUM(J) + U(I, J)
   10    CONTINUE
         ROW(J) = U(NX / 2, J)
   20 CONTINUE
      CALL MPI_GATHER(NLOC, 1, MPI_INTEGER, COUNTS, 1, MPI_INTEGER, 0,
     &                MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         DISPLS(1) = 0
         DO 30 I = 2, NPROC
            DISPLS(I) = DISPLS(I-1) + COUNTS(I-1)
   30    CONTINUE
      END IF
      CALL MPI_GATHERV(COLSUM, NLOC, MPI_DOUBLE_PRECISION, ALL, COUNTS,
     &                 DISPLS, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &                 IERR)
      CALL MPI_GATHERV(ROW, NLOC, MPI_DOUBLE_PRECISION, COLSUM, COUNTS,
     &                 DISPLS, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD,
     &                 IERR)
      IF (RANK .NE. 0) RETURN
      TOTAL = 0.0D0
      DO 40 J = 1, NY
         TOTAL = TOTAL + ALL(J)
   40 CONTINUE
      WRITE (*, 910) NX, NY, NITER, TOTAL / (NX * NY)
      OPEN (UNIT=12, FILE='heat.out', STATUS='UNKNOWN')
      WRITE (12, '(A, I4)') '# temperature along row ', NX / 2
      WRITE (12, '(I6, F12.6)') (J, COLSUM(J), J = 1, NY)
      CLOSE (12)
  910 FORMAT (' grid ', I4, ' x ', I4, ', ', I6, ' sweeps,',
     &        ' mean temperature ', F12.8)
      END
