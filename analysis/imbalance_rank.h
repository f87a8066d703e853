/*
 * imbalance_rank.h — the ranking behind GET /v1/experiments/{id}/imbalance
 * (api/imbalance.c renders it): callpaths ordered by their load-imbalance
 * factor (LIF = max/mean over ranks, paper 004 §IV) now, i.e. at the
 * largest measured coordinate (or, where a callpath was not measured there,
 * at the last coordinate it was measured at); larger first, callpaths
 * without a LIF last, ties by name. Each listed callpath gets its coded
 * warnings: its LIF model's own and, asked a point, those of its prediction
 * there (callpath_warnings.h), counted in a tally for the answer's
 * `callpath_warnings`. Also the names of the LIF groups (comp, comm, mem,
 * the whole step) the answer and its `lif=` parameter use. Pure: no I/O,
 * no globals.
 */
#ifndef PERFCAST_ANALYSIS_IMBALANCE_RANK_H
#define PERFCAST_ANALYSIS_IMBALANCE_RANK_H

#include <jansson.h>

#include "analysis/callpath_warnings.h"
#include "analysis/set_data.h"

/* The name of LIF group g (0..AD_GROUPS-1: comp, comm, mem, step); NULL
 * out of range. */
const char *imr_group_name(int g);

/* The group named name, or -1 when it is none of step, comp, comm, mem. */
int imr_group(const char *name);

/* The groups in the order of the answer: the whole step first. */
int imr_group_at(int k);

/* The callpath's LIF now: the median at coordinate `largest` when measured
 * there, else at the last coordinate it was measured at; NaN when never. */
double imr_lif_now(const ad_callpath *c, int npoints, int largest);

/* One ranked callpath. */
typedef struct imr_item {
    const ad_callpath *c;
    double now;       /* imr_lif_now */
    json_t *warnings; /* owned, for the listed items ([] when none); NULL past the limit */
} imr_item;

typedef struct imr_ranking {
    imr_item *v;     /* every callpath, in rank order */
    int n;           /* callpaths ranked */
    int listed;      /* the first min(n, limit), which carry warnings */
    cpw_tally tally; /* the listed items carrying warnings */
} imr_ranking;

/* Ranks cps (coordinate `largest` of the app is "now"), and gives the first
 * `limit` their warnings: at NULL, the LIF models' own only; otherwise also
 * their predictions' at `at` (nparams coordinates, `names` the parameters'),
 * and lif_below_one where that prediction is below 1 (imr_lif_predict).
 * *out is zeroed first. Returns 0, or -1 when out of memory (*out freed). */
int imr_rank(const ad_callpaths *cps, int largest, long limit, const double *at,
             const char *const *names, imr_ranking *out);

void imr_ranking_free(imr_ranking *r);

/* The code of the warning on a LIF predicted below 1, the smallest LIF
 * there is (max over ranks >= mean over ranks): the LIF model's trend does
 * not hold at that point (e.g. a LIF falling with the ranks, extrapolated). */
#define IMR_LIF_BELOW_ONE "lif_below_one"

/* A LIF model's prediction at `at`: *value and its 95% interval, whose
 * lower end stops at 1 (imb_lif_bound). Returns 1 when it has an interval
 * (else lo = hi = value); *below_one is 1 when the value is below 1, the
 * prediction then answered with the warning imr_lif_below_one_json(). */
int imr_lif_predict(const pmnf_model *m, const double *at, double *value, double *lo, double *hi,
                    int *below_one);

/* The coded warning IMR_LIF_BELOW_ONE for a LIF predicted as value, with
 * "value"; NULL when out of memory. */
json_t *imr_lif_below_one_json(double value);

#endif
