/*
 * keywords.c — lookups in the token table (tokens.def).
 */
#include "lexer/tokens.h"

#include <string.h>

struct entry {
    int tok;
    const char *text;
    int len;              /* of a keyword's spelling; 0 for other tokens */
};

static const struct entry table[] = {
#define KW(id, spelling) {KM_T_KW_##id, spelling, sizeof spelling - 1},
#define TK(id, what) {KM_T_##id, what, 0},
#include "lexer/tokens.def"
#undef KW
#undef TK
};

int km_keyword_token(const char *s, int len)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].len == len && table[i].text[0] == s[0] &&
            memcmp(table[i].text, s, (size_t)len) == 0)
            return table[i].tok;
    return 0;
}

const char *km_token_name(int tok)
{
    if (tok > KM_T_BASE_ && tok < KM_T_END_)
        return table[tok - KM_T_BASE_ - 1].text;
    return "token";
}
