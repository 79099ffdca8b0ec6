# markers.awk — numbers the lines of an instrumented copy as a compiler
# does, following its line markers (# N "file"), and prints each line of
# the source `src` that the copy should keep at its own number (the line
# numbers in the first file) but does not.  A statement the copy comments
# out and writes again elsewhere (ENTRY) is not kept, whatever diff says.
#   awk -v src=SOURCE -v plain=COPY_WITHOUT_MARKERS -f markers.awk KEPT COPY
BEGIN {
    n = 0
    while ((getline line < src) > 0)
        orig[++n] = line
    close(src)
    while ((getline line < plain) > 0)
        if (line ~ /^[Cc!*]/)
            commented[substr(line, 2)] = 1
    close(plain)
}
FNR == NR { if (!(orig[$1] in commented)) kept[$1] = 1; next }
/^# [0-9]+ "/ {
    cur = $2 + 0
    name = substr($0, index($0, "\"") + 1)
    sub(/"[^"]*$/, "", name)
    next
}
{
    if (name == src && cur in orig && $0 == orig[cur])
        at[cur] = 1
    cur++
}
END {
    for (l = 1; l <= n; l++)
        if ((l in kept) && !(l in at))
            printf "line %d not numbered %d: %s\n", l, l, orig[l]
}
