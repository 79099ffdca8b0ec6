/*
 * scanner.h — tokens of classified statements (a reentrant flex scanner).
 *
 * The scanner reads km_source.tok, the classifier's token text for every
 * statement joined by '\n', and returns one token at a time: keywords (the
 * lower-case words the classifier marked), names, constants, operators, and
 * EOS at the end of each statement.  Which start state it scans a statement
 * in follows from the statement's kind: FORMAT keeps its specification
 * whole, DATA/COMMON/SAVE/NAMELIST and type statements treat a `/` outside
 * parentheses as a delimiter, a type statement reads `*8` as a length, and
 * DO reads the digits after it as a label.
 */
#ifndef KM_SCANNER_H
#define KM_SCANNER_H

#include "lexer/reader.h"

struct km_token {
    int code;             /* enum km_tok or a character */
    int stmt;             /* statement index */
    int off;              /* offset in km_source.tok */
    int len;
};

struct km_scanner;

struct km_scanner *km_scanner_new(struct km_source *src);
/* The next token; code 0 at the end of the input. */
int km_scan(struct km_scanner *sc, struct km_token *t);
void km_scanner_free(struct km_scanner *sc);

#endif
