/*
 * tracedump.c — the tests' own reader of a trace file (doc/KM_trace.md),
 * written from the format's description alone, apart from kmview's: what
 * libkm writes is checked against the page, not against another reader.
 *
 *   tracedump FILE
 *
 * prints "state S signal G rank R nranks N blocks B dropped D", then per
 * record of each data block, in block order:
 *
 *   T IN|OUT DEPTH NAME        an entry or exit on thread T (DEPTH: of the
 *                              region, 1 outermost, counted per thread)
 *   T SENT|RECEIVED NAME PEER TAG BYTES COMM
 *   T COMM ID SIZE FIRST COUNT INTER MEMBER...
 *   T CLOCK | T END 0          (REGION records are not printed)
 *
 * and last "open T NAME..." for each thread with regions still open,
 * outermost first.  Exits 1 on a malformed file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)1 << 18)
#define MAX_THREADS 256
#define MAX_DEPTH 4096

static char **names;                  /* names[id], from REGION records */
static int nnames;

static const char *name_of(int32_t id)
{
    return id > 0 && id < nnames && names[id] ? names[id] : "?";
}

static void define(int32_t id, const unsigned char *x, int extra)
{
    if (id <= 0 || id > 1 << 24)
        return;
    if (id >= nnames) {
        names = realloc(names, sizeof *names * (size_t)(id + 1));
        memset(names + nnames, 0, sizeof *names * (size_t)(id + 1 - nnames));
        nnames = id + 1;
    }
    free(names[id]);
    names[id] = strndup((const char *)x + 16, (size_t)(extra - 1) * 16);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    FILE *fp = fopen(argv[1], "rb");
    if (!fp)
        return 1;
    fseek(fp, 0, SEEK_END);
    size_t n = (size_t)ftell(fp);
    rewind(fp);
    unsigned char *f = malloc(n ? n : 1);
    if (!f || fread(f, 1, n, fp) != n || n < 384 ||
        memcmp(f, "kmtool-trace", 12) != 0)
        return 1;
    fclose(fp);
    uint32_t state, block_size;
    int32_t sig, rank, nranks;
    uint64_t blocks, dropped;
    memcpy(&block_size, f + 24, 4);
    memcpy(&rank, f + 32, 4);
    memcpy(&nranks, f + 36, 4);
    memcpy(&blocks, f + 72, 8);
    memcpy(&state, f + 80, 4);
    memcpy(&sig, f + 84, 4);
    memcpy(&dropped, f + 88, 8);
    if (block_size != BLOCK)
        return 1;
    printf("state %u signal %d rank %d nranks %d blocks %llu dropped %llu\n",
           state, sig, rank, nranks, (unsigned long long)blocks,
           (unsigned long long)dropped);
    static int32_t stack[MAX_THREADS][MAX_DEPTH];
    static int depth[MAX_THREADS];
    for (uint64_t b = 1; b <= blocks && (b + 1) * BLOCK <= n; b++) {
        const unsigned char *blk = f + b * BLOCK, *end = blk + BLOCK;
        uint32_t magic;
        int32_t th;
        memcpy(&magic, blk, 4);
        memcpy(&th, blk + 4, 4);
        if (magic != 0x42544d4bu || th < 0 || th >= MAX_THREADS)
            return 1;
        for (const unsigned char *p = blk + 16; p + 16 <= end && p[8];) {
            int type = p[8], extra = p[9];
            int32_t id;
            memcpy(&id, p + 12, 4);
            const unsigned char *x = p + 16;
            if (x + 16 * extra > end)
                return 1;
            int32_t peer, tag;
            int64_t bytes;
            switch (type) {
            case 1:
                if (depth[th] < MAX_DEPTH)
                    stack[th][depth[th]] = id;
                printf("%d IN %d %s\n", th, ++depth[th], name_of(id));
                break;
            case 2:
                printf("%d OUT %d %s\n", th, depth[th], name_of(id));
                if (depth[th] > 0)
                    depth[th]--;
                break;
            case 3:
            case 4:
                memcpy(&peer, x, 4);
                memcpy(&tag, x + 4, 4);
                memcpy(&bytes, x + 8, 8);
                printf("%d %s %s %d %d %lld %d\n", th,
                       type == 3 ? "SENT" : "RECEIVED", name_of(id), peer,
                       tag, (long long)bytes, p[10] | p[11] << 8);
                break;
            case 5:
                define(id, x, extra);
                break;
            case 6:
                printf("%d CLOCK\n", th);
                break;
            case 7:
                printf("%d END %d\n", th, id);
                break;
            case 8: {
                int32_t h[4];
                memcpy(h, x, sizeof h);
                if (h[2] < 0 || h[2] > 1016 || 16 + 4 * h[2] > 16 * extra)
                    return 1;
                printf("%d COMM %d %d %d %d %d", th, id, h[0], h[1], h[2],
                       h[3]);
                for (int32_t k = 0; k < h[2]; k++) {
                    int32_t m;
                    memcpy(&m, x + 16 + 4 * k, 4);
                    printf(" %d", m);
                }
                printf("\n");
                break;
            }
            default:
                return 1;
            }
            p += 16 * (size_t)(1 + extra);
        }
    }
    for (int th = 0; th < MAX_THREADS; th++) {
        if (depth[th] == 0)
            continue;
        printf("open %d", th);
        for (int d = 0; d < depth[th] && d < MAX_DEPTH; d++)
            printf(" %s", name_of(stack[th][d]));
        printf("\n");
    }
    return 0;
}
