/*
 * fuzz_frontend.c — a libFuzzer target for the reader, classifier,
 * scanner and parser (see fuzz/README.md).
 *
 * One input is one source file.  Its first byte picks the reader's options
 * (line length 72, 132 or none; D lines as comments or code; fixed or free
 * form), so every layout rule gets fuzzed; the rest is the file's text.
 * The target reads, parses and dumps it as kmrun --dump does.  Whatever the input, the front
 * end must return, and an error must come with a diagnostic: a false
 * return with no error counted aborts (a "crash" the fuzzer reports).
 * It never writes files and never reads any but INCLUDEs named by an
 * absolute path (the input's own directory does not exist).
 *
 * Built with -DKM_FUZZ_REWRITE (fuzz.sh --rewriter), it also instruments
 * what it parsed, with the default settings, as kmrun -td does: the
 * rewriter works from what the front end found, so inconsistencies there
 * show up as the rewriter's crashes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lexer/reader.h"
#include "parser/parse.h"
#include "parser/program.h"
#include "support/buf.h"
#include "support/diag.h"
#ifdef KM_FUZZ_REWRITE
#include "control/control.h"
#include "rewriter/rewrite.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require_diagnostic(bool ok, const struct km_diag *d,
                               const char *stage)
{
    if (!ok && d->errors == 0) {
        fprintf(stderr, "%s failed without a diagnostic\n", stage);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const int lengths[] = {72, 132, 0, 72};
    struct km_reader_opts o = {0};
    o.line_length = lengths[data[0] & 3];
    o.d_lines_are_code = (data[0] & 4) != 0;
    o.form = (data[0] & 8) ? KM_FORM_FREE : KM_FORM_FIXED;
    struct km_diag d = {0};
    d.quiet = 1;
    struct km_source src;
    bool ok = km_read_source_text(&src, "/nonexistent-kmtool-fuzz/fuzz.f",
                                  (const char *)data + 1, size - 1, &o, &d);
    require_diagnostic(ok, &d, "reading");
    if (ok) {
        struct km_program prog;
        ok = km_parse(&src, &prog, &d);
        require_diagnostic(ok, &d, "parsing");
        if (ok) {
            struct km_buf dump = {0};
            km_dump_program(&prog, &dump);
            km_buf_free(&dump);
        }
#ifdef KM_FUZZ_REWRITE
        if (ok) {
            struct km_settings set;
            km_settings_default(&set);
            struct km_rewrite_opts wo = {"fuzz.f", o.line_length};
            struct km_buf text = {0};
            require_diagnostic(km_rewrite(&prog, &set, &wo, &text, &d), &d,
                               "instrumenting");
            km_buf_free(&text);
            km_settings_free(&set);
        }
#endif
        if (prog.src)
            km_program_free(&prog);
    }
    km_diag_flush(&d);
    km_diag_free(&d);
    km_source_free(&src);
    return 0;
}
