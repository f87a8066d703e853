/*
 * callpath_warnings.h — the coded warnings of one callpath's model and of
 * its prediction at an asked point, for the analyses that answer item by
 * item (bottlenecks, imbalance), and the tally of them that the answer's
 * top level carries as one `callpath_warnings` warning: how many items
 * carry warnings and which codes, so that a client reading only the top
 * level (and ?strict=true) sees them. The warning objects are the shape of
 * modeling/warning_json.h, from the same checks the predict route uses
 * (modeling/assess.h). Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_CALLPATH_WARNINGS_H
#define PERFCAST_ANALYSIS_CALLPATH_WARNINGS_H

#include <jansson.h>

#include "modeling/modeler.h"

#define CPW_CODE "callpath_warnings"

/* The model's own warnings, then those of its prediction at `at` (NULL: no
 * point, model warnings only), as a new array; *bits (may be NULL) gets the
 * PMNF_WARN_* bits of the point's check. NULL when out of memory. */
json_t *cpw_model_warnings(const pmnf_model *m, const double *at, const char *const *names,
                           unsigned *bits);

/* How many items carried warnings, and their codes once each. */
typedef struct cpw_tally {
    int count;
    json_t *codes; /* array of strings, owned; NULL until the first warning */
} cpw_tally;

/* Counts one item's warnings array (an empty one counts nothing). Returns
 * 0, or -1 when out of memory. */
int cpw_tally_add(cpw_tally *t, const json_t *warnings);

/* The top-level summary {"code":"callpath_warnings","message","count",
 * "of","codes"}, what: the items' noun ("ranked callpaths"); NULL when no
 * item carried a warning (or out of memory). */
json_t *cpw_summary_json(const cpw_tally *t, int of, const char *what);

void cpw_tally_free(cpw_tally *t);

#endif
