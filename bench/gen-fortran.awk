# gen-fortran.awk — a large synthetic FORTRAN 77 input for bench/frontend.sh.
#
#   awk -v dir=DIR -v files=N -v routines=M [-v form=free] -f gen-fortran.awk
#
# Writes DIR/synNNN.f, each with M subroutines in the style of numerical
# libraries: comment blocks, declarations, PARAMETER and DATA, block IFs,
# nested and labeled DO loops, continuation lines, CALLs, WRITE with
# FORMAT, GOTO.  The same arguments always give the same files.  With
# form=free: the same code in free form, DIR/synNNN.f90 (comments with
# `!`, a continued line ending with `&` and its continuation beginning
# with one).
function r(n) { return int(rand() * n) }
function out(s) {
    if (form != "free") {
        print s > file
        return
    }
    if (s ~ /^[*Cc]/) {
        s = "!" substr(s, 2)
    } else if (substr(s, 1, 5) ~ /^ *$/ && substr(s, 6, 1) !~ /^ ?$/) {
        held = held " &"        # a continuation line: mark both ends
        s = "     &" substr(s, 7)
    }
    flush()
    held = s
    holding = 1
}
function flush() {
    if (holding)
        print held > file
    holding = 0
}
function comments(n,   i) {
    for (i = 0; i < n; i++)
        out("*     " substr("Computes the update of the trailing submatrix and checks the residual norms of the solution vectors.", 1, 30 + r(40)))
}
function assignment(ind, v) {
    if (r(3) == 0) {
        out(ind v " = " v " + ABS( A( I, J ) ) + MAX( TEMP, S ) -")
        out("     $       SQRT( ABS( X( I ) ) )")
    } else {
        out(ind v " = " v " + A( I, J )*X( J ) + B( I )")
    }
}
function loop_nest(ind, lab) {
    if (r(2) == 0) {
        out(ind "DO " lab " J = 1, N")
        out(ind "   TEMP = ZERO")
        out(ind "   DO " lab " I = 1, M")
        assignment(ind "      ", "TEMP")
        out(sprintf("%5d %s", lab, substr(ind, 7) "CONTINUE"))
    } else {
        out(ind "DO J = 1, N")
        out(ind "   DO I = J, M, 2")
        out(ind "      IF( A( I, J ).NE.ZERO ) THEN")
        out(ind "         S = A( I, J ) / ( ONE + ABS( B( J ) ) )")
        out(ind "         X( I ) = X( I ) - S*B( J ) +")
        out("     $            TEMP*A( J, I )")
        out(ind "      ELSE")
        out(ind "         X( I ) = ZERO")
        out(ind "      END IF")
        out(ind "   END DO")
        out(ind "END DO")
    }
}
function routine(f, k,   name, i, nblocks, lab) {
    name = sprintf("SYN%03d%02d", f, k)
    comments(8 + r(12))
    out("      SUBROUTINE " name "( N, M, A, LDA, B, X, INFO )")
    out("*     .. Scalar Arguments ..")
    out("      INTEGER            INFO, LDA, M, N")
    out("*     .. Array Arguments ..")
    out("      DOUBLE PRECISION   A( LDA, * ), B( * ), X( * )")
    out("*     .. Parameters ..")
    out("      DOUBLE PRECISION   ZERO, ONE")
    out("      PARAMETER          ( ZERO = 0.0D+0, ONE = 1.0D+0 )")
    out("*     .. Local Scalars ..")
    out("      INTEGER            I, J, K, KASE")
    out("      DOUBLE PRECISION   TEMP, S")
    out("      CHARACTER*20       MSG")
    out("      LOGICAL            DONE")
    out("      SAVE               KASE")
    out("      DATA               KASE / 0 /, MSG / 'iteration' /")
    out("*     .. External Subroutines ..")
    out("      EXTERNAL           XERBLA, " sprintf("SYN%03d%02d", f, (k + 1) % routines))
    out("*     .. Intrinsic Functions ..")
    out("      INTRINSIC          ABS, MAX, SQRT")
    out("*     .. Executable Statements ..")
    out("      INFO = 0")
    out("      IF( N.LT.0 ) THEN")
    out("         INFO = -1")
    out("      ELSE IF( M.LT.0 ) THEN")
    out("         INFO = -2")
    out("      ELSE IF( LDA.LT.MAX( 1, M ) ) THEN")
    out("         INFO = -4")
    out("      END IF")
    out("      IF( INFO.NE.0 ) THEN")
    out("         CALL XERBLA( '" name "', -INFO )")
    out("         RETURN")
    out("      END IF")
    nblocks = 3 + r(5)
    lab = 10
    for (i = 0; i < nblocks; i++) {
        if (r(4) == 0)
            comments(2 + r(4))
        if (r(3) == 0) {
            out("      CALL " sprintf("SYN%03d%02d", f, (k + 1) % routines) "( N - 1, M, A, LDA, B, X,")
            out("     $             INFO )")
        }
        loop_nest("      ", lab)
        lab += 10
        if (r(3) == 0) {
            out("      KASE = KASE + 1")
            out("      IF( KASE.GT.100 ) GO TO " lab)
            out("      WRITE( *, FMT = 9999 ) MSG, KASE, TEMP")
            out(sprintf("%5d CONTINUE", lab))
            lab += 10
        }
    }
    out("      DONE = TEMP.GT.ONE .OR. S.LT.ZERO")
    out("      RETURN")
    out(" 9999 FORMAT( 1X, A, ' ', I6, ' TEMP = ', 1P, E12.4 )")
    out("*")
    out("*     End of " name)
    out("*")
    out("      END")
}
BEGIN {
    srand(1)
    for (f = 0; f < files; f++) {
        file = sprintf("%s/syn%03d.%s", dir, f, form == "free" ? "f90" : "f")
        for (k = 0; k < routines; k++)
            routine(f, k)
        flush()
        close(file)
    }
}
