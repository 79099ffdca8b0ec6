/*
 * files.c — the Files part of the summary and exports: per file, the
 * metadata operations (OPEN, CLOSE, INQUIRE, REWIND, BACKSPACE, ENDFILE,
 * FLUSH, WAIT) and the data operations (READ, WRITE, PRINT) with their
 * time and bytes, and the same for MPI-IO calls (rows of their own).
 * Files are told apart by name and interface: the same name on several
 * ranks is one file (a shared file), summed over them.
 *
 * Must never read files or change the run.
 */
#include "kmview/views/files.h"

#include <stdlib.h>
#include <string.h>

#include "kmview/write/out.h"
#include "kmview/views/messages.h"
#include "support/buf.h"


static void add_file(struct kv_file *to, const struct kv_file *x)
{
    for (int k = 0; k < KV_META_KINDS; k++)
        to->meta[k] += x->meta[k];
    to->meta_s += x->meta_s;
    to->read_s += x->read_s;
    to->write_s += x->write_s;
    to->meta_est |= x->meta_est;
    to->read_est |= x->read_est;
    to->write_est |= x->write_est;
    to->reads += x->reads;
    to->writes += x->writes;
    to->read_b.bytes += x->read_b.bytes;
    to->write_b.bytes += x->write_b.bytes;
    if (x->size > to->size)
        to->size = x->size;
}

static double io_time(const struct kv_file *x)
{
    return x->meta_s + x->read_s + x->write_s;
}

int kv_file_sum_order(const void *pa, const void *pb)
{
    const struct kv_file_sum *a = pa, *b = pb;
    if (a->sum.mpiio != b->sum.mpiio)
        return a->sum.mpiio ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int by_time(const void *pa, const void *pb)
{
    const struct kv_file_sum *a = pa, *b = pb;
    double x = io_time(&a->sum), y = io_time(&b->sum);
    if (x != y)
        return x > y ? -1 : 1;
    return kv_file_sum_order(a, b);
}

struct kv_file_sum *kv_files_over_ranks(const struct kv_run *run, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < run->nsections; i++)
        cap += run->ranks[i].nfiles;
    struct kv_file_sum *v = km_xcalloc(cap + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; i < run->nsections; i++)
        for (size_t k = 0; k < run->ranks[i].nfiles; k++) {
            v[*n].name = run->ranks[i].files[k].name;
            v[*n].ranks = 1;
            v[*n].sum = run->ranks[i].files[k];
            v[*n].kinds[0] = 1u << v[*n].sum.read_b.kind;
            v[*n].kinds[1] = 1u << v[*n].sum.write_b.kind;
            (*n)++;
        }
    qsort(v, *n, sizeof *v, kv_file_sum_order);
    size_t m = 0;
    for (size_t k = 0; k < *n; k++) {
        if (m > 0 && kv_file_sum_order(&v[m - 1], &v[k]) == 0) {
            add_file(&v[m - 1].sum, &v[k].sum);
            v[m - 1].kinds[0] |= v[k].kinds[0];
            v[m - 1].kinds[1] |= v[k].kinds[1];
            v[m - 1].ranks++;
        } else {
            v[m++] = v[k];
        }
    }
    *n = m;
    return v;
}

const char *kv_file_bytes_text(char buf[40], uint64_t bytes, unsigned kinds)
{
    char t[32];
    if (kinds == 1u << KV_BYTES_UNKNOWN)
        return "-";
    bool low = kinds & (1u << KV_BYTES_AT_LEAST | 1u << KV_BYTES_UNKNOWN);
    snprintf(buf, 40, "%s%s%s", low ? ">=" : "",
             kinds & 1u << KV_BYTES_ESTIMATE ? "~" : "",
             kv_bytes_text(t, bytes));
    return buf;
}

static const char *secs_text(char buf[32], double s, bool est)
{
    snprintf(buf, 32, "%s%.3g", est ? "~" : "", s);
    return buf;
}

void kv_summary_files(FILE *f, const struct kv_stats *st, int top)
{
    size_t any;
    struct kv_file_sum *v = kv_files_over_ranks(st->run, &any);
    if (!any) {
        free(v);
        return;
    }
    qsort(v, any, sizeof *v, by_time);
    size_t n = top > 0 && (size_t)top < any ? (size_t)top : any;
    fprintf(f, "\nFiles (what the measured I/O statements and MPI-IO calls "
            "did, summed over the ranks; seconds)\n");
    fprintf(f, "  %5s %6s %6s %9s %8s %9s %11s %8s %9s %11s  %-7s %s\n",
            "Ranks", "Opens", "Meta", "Meta(s)", "Reads", "Read(s)", "Read",
            "Writes", "Write(s)", "Written", "Via", "File");
    for (size_t k = 0; k < n; k++) {
        const struct kv_file *x = &v[k].sum;
        uint64_t meta = 0;
        for (int m = 0; m < KV_META_KINDS; m++)
            meta += x->meta[m];
        char a[32], b[32], c[32], d[40], e[40];
        fprintf(f, "  %5d %6llu %6llu %9s %8llu %9s %11s %8llu %9s %11s  %-7s "
                "%s\n",
                v[k].ranks, (unsigned long long)x->meta[KV_META_OPENS],
                (unsigned long long)meta, secs_text(a, x->meta_s, x->meta_est),
                (unsigned long long)x->reads,
                secs_text(b, x->read_s, x->read_est),
                kv_file_bytes_text(d, x->read_b.bytes, v[k].kinds[0]),
                (unsigned long long)x->writes,
                secs_text(c, x->write_s, x->write_est),
                kv_file_bytes_text(e, x->write_b.bytes, v[k].kinds[1]),
                x->mpiio ? "MPI-IO" : "Fortran",
                v[k].name);
    }
    if (n < any)
        fprintf(f, "  ... %zu more files (-n 0: all)\n", any - n);
    fprintf(f, "  (Meta: OPEN, CLOSE, INQUIRE, REWIND, BACKSPACE, ENDFILE, "
            "FLUSH, WAIT, and MPI_FILE_ calls that move no data; bytes exact "
            "for unformatted transfers and MPI-IO, ~ estimated from a file's "
            "growth, >= some not known and left out)\n");
    free(v);
}

static const char *const kind_name[] = { "exact", "estimate", "at_least",
                                          "unknown" };

void kv_csv_rank_files(FILE *f, const void *ctx)
{
    const struct kv_stats *st = ctx;
    fputs("rank,file,opens,closes,inquires,seeks,flushes,meta_seconds,"
          "meta_estimated,reads,read_seconds,read_estimated,bytes_read,"
          "bytes_read_kind,writes,write_seconds,write_estimated,"
          "bytes_written,bytes_written_kind,size,interface\n", f);
    for (size_t i = 0; i < st->run->nsections; i++) {
        const struct kv_rank *r = &st->run->ranks[i];
        for (size_t k = 0; k < r->nfiles; k++) {
            const struct kv_file *x = &r->files[k];
            fprintf(f, "%d,", r->rank);
            kv_csv_str(f, x->name);
            for (int m = 0; m < KV_META_KINDS; m++)
                fprintf(f, ",%llu", (unsigned long long)x->meta[m]);
            fprintf(f, ",%.7e,%d,%llu,%.7e,%d,%llu,%s,%llu,%.7e,%d,%llu,%s,",
                    x->meta_s, x->meta_est, (unsigned long long)x->reads,
                    x->read_s, x->read_est,
                    (unsigned long long)x->read_b.bytes,
                    kind_name[x->read_b.kind], (unsigned long long)x->writes,
                    x->write_s, x->write_est,
                    (unsigned long long)x->write_b.bytes,
                    kind_name[x->write_b.kind]);
            if (x->size >= 0)
                fprintf(f, "%lld", (long long)x->size);
            fprintf(f, ",%s\n", x->mpiio ? "mpi-io" : "fortran");
        }
    }
}

void kv_json_rank_files(FILE *f, const struct kv_rank *r)
{
    static const char *const meta[] = { "opens", "closes", "inquires",
                                        "seeks", "flushes" };
    fputs(",\"files\":[", f);
    for (size_t k = 0; k < r->nfiles; k++) {
        const struct kv_file *x = &r->files[k];
        fputs(k ? ",{\"name\":" : "{\"name\":", f);
        kv_json_str(f, x->name);
        for (int m = 0; m < KV_META_KINDS; m++)
            fprintf(f, ",\"%s\":%llu", meta[m], (unsigned long long)x->meta[m]);
        fprintf(f, ",\"meta_seconds\":%.7e,\"meta_estimated\":%s,"
                "\"reads\":%llu,\"read_seconds\":%.7e,\"read_estimated\":%s,"
                "\"bytes_read\":%llu,\"bytes_read_kind\":\"%s\","
                "\"writes\":%llu,\"write_seconds\":%.7e,"
                "\"write_estimated\":%s,\"bytes_written\":%llu,"
                "\"bytes_written_kind\":\"%s\",\"size\":",
                x->meta_s, x->meta_est ? "true" : "false",
                (unsigned long long)x->reads, x->read_s,
                x->read_est ? "true" : "false",
                (unsigned long long)x->read_b.bytes, kind_name[x->read_b.kind],
                (unsigned long long)x->writes, x->write_s,
                x->write_est ? "true" : "false",
                (unsigned long long)x->write_b.bytes,
                kind_name[x->write_b.kind]);
        if (x->size >= 0)
            fprintf(f, "%lld", (long long)x->size);
        else
            fputs("null", f);
        fprintf(f, ",\"interface\":\"%s\"}", x->mpiio ? "mpi-io" : "fortran");
    }
    fputc(']', f);
}
