/*
 * unit_trace.c — unit test of the trace file (KM_trace, doc/KM_trace.md):
 * its header, region definitions before their first events, entries and
 * exits in order with the clock, and how it ends.
 */
#include "unit.h"

/* One record of a trace file (doc/KM_trace.md), as the test reads it. */
struct trace_rec {
    int64_t time;
    int type, extra;
    int32_t id;
    const unsigned char *x;          /* its extra slots */
};

/* The records of trace file f (n bytes), in block order, into v (up to
 * max); how many there are. */
static int trace_records(const unsigned char *f, size_t n,
                         struct trace_rec *v, int max)
{
    const size_t block = (size_t)1 << 18;
    uint64_t blocks;
    memcpy(&blocks, f + 72, sizeof blocks);
    int k = 0;
    for (uint64_t b = 1; b <= blocks && (b + 1) * block <= n; b++) {
        const unsigned char *p = f + b * block + 16, *end = f + (b + 1) * block;
        while (p + 16 <= end && p[8] != 0) {
            struct trace_rec r = { .type = p[8], .extra = p[9], .x = p + 16 };
            memcpy(&r.time, p, sizeof r.time);
            memcpy(&r.id, p + 12, sizeof r.id);
            if (k < max)
                v[k] = r;
            k++;
            p += 16 * (size_t)(1 + r.extra);
        }
    }
    return k;
}

static uint32_t header_u32(const unsigned char *f, size_t at)
{
    uint32_t v;
    memcpy(&v, f + at, sizeof v);
    return v;
}

/* A traced region: the header says what ran and how it ended; every
 * region is defined before its first event; entries and exits are in
 * order with the clock's ticks; a region still open is where the trace
 * ends. */
void test_trace(void)
{
    begin("trace");
    int32_t m = reg_routine("1 1 100000 0 MAIN m.f");
    int32_t t = reg_routine("2 9 100000 1 TRACED t.f");
    int32_t d = reg("10 12 100000 1 DO 10 I = 1, N", t);
    in_at(0, m);
    for (int k = 0; k < 10; k++) {
        in_at(100000 * k + 10000, t);
        in_at(100000 * k + 20000, d);
        out_at(100000 * k + 30000, d);
        out_at(100000 * k + 40000, t);
    }
    in_at(5000000, t);                /* still open */
    size_t n = 0;
    unsigned char *f = (unsigned char *)slurp_n("KM_trace.000", &n);
    CHECK(f != NULL && n >= 2 * ((size_t)1 << 18));
    if (!f || n < 2 * ((size_t)1 << 18)) {
        free(f);
        return;
    }
    CHECK(memcmp(f, "kmtool-trace\0\0\0\0", 16) == 0);
    CHECK_EQ(header_u32(f, 16), 2);                 /* version */
    CHECK_EQ(header_u32(f, 20), 0x01020304);
    CHECK_EQ(header_u32(f, 24), 1 << 18);
    CHECK_EQ(header_u32(f, 80), 1);                 /* running */
    CHECK_EQ((int32_t)header_u32(f, 32), -1);       /* no rank */
    struct trace_rec v[64];
    int nrec = trace_records(f, n, v, 64);
    /* a clock; TRACED and DO (MAIN is not traced) defined at their first
     * entries; 10 rounds of 4 events; the open TRACED */
    CHECK_EQ(nrec, 1 + 2 + 40 + 1);
    if (nrec == 44) {
        CHECK_EQ(v[0].type, 6);
        CHECK_EQ(v[1].type, 5);
        CHECK_EQ(v[1].id, t);
        CHECK(strcmp((const char *)v[1].x + 16, "TRACED") == 0);
        CHECK(strcmp((const char *)v[1].x + 16 + 7, "t.f") == 0);
        CHECK_EQ(v[3].type, 5);                     /* DO, then entered */
        CHECK_EQ(v[3].id, d);
        int32_t kind, line, routine;
        memcpy(&kind, v[3].x, 4);
        memcpy(&line, v[3].x + 4, 4);
        memcpy(&routine, v[3].x + 8, 4);
        CHECK_EQ(kind, 10);
        CHECK_EQ(line, 12);
        CHECK_EQ(routine, t);
        CHECK(strcmp((const char *)v[3].x + 16, "DO 10 I = 1, N") == 0);
        CHECK(strcmp((const char *)v[3].x + 16 + 15, "t.f") == 0);
        static const int kinds[] = { 1, 1, 2, 2 };
        int ok = 1;
        for (int k = 0, r = 2; k < 10; k++) {
            for (int e = 0; e < 4; e++, r++) {
                if (r == 3)
                    r++;                               /* DO's definition */
                ok &= v[r].type == kinds[e] &&
                      v[r].time == 100000 * k + 10000 * (e + 1) &&
                      v[r].id == (e == 0 || e == 3 ? t : d);
            }
        }
        CHECK(ok);
        CHECK_EQ(v[43].type, 1);
        CHECK_EQ(v[43].id, t);
        CHECK_EQ(v[43].time, 5000000);
    }
    free(f);
    km_stop_f();
    f = (unsigned char *)slurp_n("KM_trace.000", &n);
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ(header_u32(f, 80), 2);             /* results written */
        nrec = trace_records(f, n, v, 64);
        CHECK_EQ(v[nrec - 1].type, 7);              /* END */
        CHECK_EQ(v[nrec - 2].type, 6);              /* its clock */
        CHECK_EQ(v[nrec - 3].type, 2);              /* TRACED closed */
        CHECK_EQ(v[nrec - 3].id, t);
        /* the file ends with its last block claimed */
        uint64_t blocks;
        memcpy(&blocks, f + 72, sizeof blocks);
        CHECK_EQ(n, (blocks + 1) << 18);
    }
    free(f);
}
