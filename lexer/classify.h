/*
 * classify.h — what kind of statement each statement is.
 *
 * Blanks mean nothing in fixed form, so `DO 10 I = 1.10` is an assignment
 * and `D O 1 0 I = 1 , 3` a loop.  The classifier decides from the text
 * with blanks removed, looking at the `=` and `,` found outside parentheses
 * and constants (the approach of f2c's lexer), then writes the statement's
 * token text for the scanner: upper case, no blanks outside constants, and
 * its keywords in lower case (a blank between two adjacent keywords), so
 * the flex scanner never has to guess where a keyword ends.
 */
#ifndef KM_CLASSIFY_H
#define KM_CLASSIFY_H

#include <stdbool.h>

#include "lexer/reader.h"

enum km_skind {
    KS_NONE = 0,
    /* executable: KS_ASSIGNMENT to KS_ALLOCATE, and nothing else */
    KS_ASSIGNMENT, KS_ASSIGN, KS_CALL, KS_GOTO,
    KS_IF_LOGICAL, KS_IF_ARITH, KS_IF_BLOCK, KS_ELSEIF, KS_ELSE, KS_ENDIF,
    KS_DO, KS_DO_WHILE, KS_DO_CONCURRENT, KS_ENDDO, KS_CONTINUE, KS_EXIT,
    KS_CYCLE, KS_RETURN, KS_STOP, KS_PAUSE,
    KS_READ, KS_WRITE, KS_PRINT, KS_OPEN, KS_CLOSE, KS_INQUIRE,
    KS_REWIND, KS_BACKSPACE, KS_ENDFILE, KS_FLUSH, KS_WAIT,
    /* Fortran 90-2008 constructs: an opening statement, the statements
     * that begin its other blocks, its END */
    KS_SELECT, KS_CASE, KS_ENDSELECT,
    KS_WHERE, KS_ELSEWHERE, KS_ENDWHERE, KS_WHERE_STMT,
    KS_FORALL, KS_ENDFORALL, KS_FORALL_STMT,
    KS_BLOCK, KS_ENDBLOCK, KS_ASSOCIATE, KS_ENDASSOCIATE,
    KS_CRITICAL, KS_ENDCRITICAL, KS_SYNC,
    KS_ALLOCATE,
    /* anywhere */
    KS_FORMAT, KS_ENTRY, KS_DATA, KS_INCLUDE,
    /* program units */
    KS_PROGRAM, KS_SUBROUTINE, KS_FUNCTION, KS_BLOCKDATA, KS_END,
    KS_CONTAINS, KS_MODULE, KS_SUBMODULE,
    /* specification */
    KS_TYPE, KS_IMPLICIT, KS_DIMENSION, KS_COMMON, KS_EQUIVALENCE,
    KS_PARAMETER, KS_EXTERNAL, KS_INTRINSIC, KS_SAVE, KS_NAMELIST,
    KS_POINTER, KS_ATTRIBUTE, KS_INTENT, KS_USE, KS_PROCEDURE,
    KS_INTERFACE, KS_ENDINTERFACE, KS_MODULE_PROCEDURE,
    KS_TYPEDEF, KS_ENDTYPE, KS_SPEC,  /* TYPE name ... END TYPE; PUBLIC,
                                         PRIVATE, BIND, IMPORT, GENERIC,
                                         FINAL, SEQUENCE, ENUM... */
    /* decided by the parser, never by the classifier: an assignment that
     * defines a statement function */
    KS_STMT_FUNCTION,
    KS_COUNT_
};

/* The name of a statement kind, for dumps and messages. */
const char *km_skind_name(int kind);

/* Statements that open a construct (DO loops and IF blocks aside), begin
 * another block of one (CASE, ELSEWHERE), and end one. */
bool km_opens_construct(int kind);
bool km_branches_construct(int kind);
bool km_closes_construct(int kind);

/* Classify every statement of `src`, filling kind, tok and sub_* and
 * building src->tok (statements joined by '\n').  Returns false, with a
 * diagnostic per statement, if some statement is not recognised. */
bool km_classify(struct km_source *src);

/* The source position of offset `tok` (in src->tok) of statement `stmt`. */
void km_tok_position(const struct km_source *src, int stmt, int tok,
                     int *line, int *col);

/* The raw-text offset (in src->raw) of offset `tok` of statement `stmt`. */
int km_tok_to_raw(const struct km_source *src, int stmt, int tok);

#endif
