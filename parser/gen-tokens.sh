#!/bin/sh
# gen-tokens.sh TOKENS_DEF < grammar.y.in > grammar.y
#
# Replace the @TOKENS@ line of the grammar with %token declarations built
# from lexer/tokens.def, numbered from 258 in the order of that file, as
# lexer/tokens.h numbers them, so scanner and parser agree without the
# scanner including the parser's header.
set -e
def=$1
awk -v def="$def" '
BEGIN {
    n = 258
    while ((getline line < def) > 0) {
        if (line !~ /^(KW|TK)\(/)
            continue
        kind = substr(line, 1, 2)
        rest = substr(line, 4)
        id = rest
        sub(/,.*/, "", id)
        text = rest
        sub(/^[^"]*"/, "", text)
        sub(/"\)[ \t]*$/, "", text)
        if (kind == "KW")
            decl[n] = sprintf("%%token <tok> KW_%s %d \"%s\"", id, n, toupper(text))
        else
            decl[n] = sprintf("%%token <tok> %s %d \"%s\"", id, n, text)
        last = n
        n++
    }
    close(def)
}
/^@TOKENS@$/ {
    for (i = 258; i <= last; i++)
        print decl[i]
    next
}
{ print }
'
