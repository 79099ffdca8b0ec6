/*
 * parse.h — the front end in one call: classify, scan and parse a source.
 */
#ifndef KM_PARSE_H
#define KM_PARSE_H

#include <stdbool.h>

#include "parser/program.h"
#include "support/diag.h"

/* Parse `src` (already read) into `prog`.  Returns false, with
 * diagnostics, if any statement is malformed or the units do not close. */
bool km_parse(struct km_source *src, struct km_program *prog,
              struct km_diag *diag);

#endif
