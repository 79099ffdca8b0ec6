/*
 * tokens.h — token codes, from tokens.def.
 *
 * The numbers equal those bison gives the same tokens in parser/grammar.y
 * (generated from the same table), so the scanner never needs the parser's
 * header.  Single-character tokens are their character code.
 */
#ifndef KM_TOKENS_H
#define KM_TOKENS_H

enum km_tok {
    KM_T_EOF = 0,
    KM_T_BASE_ = 257,
#define KW(id, spelling) KM_T_KW_##id,
#define TK(id, what) KM_T_##id,
#include "lexer/tokens.def"
#undef KW
#undef TK
    KM_T_END_
};

/* The token of a lower-case keyword spelling, or 0. */
int km_keyword_token(const char *s, int len);
/* The spelling of a keyword token, or a description of another token. */
const char *km_token_name(int tok);

#endif
