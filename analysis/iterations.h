/*
 * iterations.h — Kavarakuntla et al.'s iteration model of S-SGD (paper 004
 * Eq. 1-7, modeling/iteration.h) over an experiment's profiles: which
 * callpaths are which phase, the iteration statistics per fitting
 * coordinate (mean ± standard deviation and median over the iterations),
 * the speedups of Eq. 6 and Eq. 7, and the PMNF models of each over the
 * parameters, and the answer's document of them. GET
 * /v1/experiments/{id}/iterations (api/iterations.c) reads the rows and
 * sends the document.
 *
 * Which callpaths are which phase: name parts (ingest/phase.h matching: case
 * ignored, at the start of a word), per phase in order of preference; the
 * first part that names any callpath of the experiment is the phase's (so a
 * user's own "backward" range is not added to PyTorch's autograd ops). The
 * experiment's "iteration_phases" ({"io":"...", ...}) replaces the defaults
 * per phase. t_c, the gradient aggregation, is the communication callpaths'.
 *
 * Train steps of fitting uploads only, warm-up steps left out; speedups
 * (Eq. 6 on Eq. 3's t_iter, Eq. 7 on the overlapped times) against P_1 of
 * each coordinate's series along x_1, scaled by the ranks N_k/N_1.
 */
#ifndef PERFCAST_ANALYSIS_ITERATIONS_H
#define PERFCAST_ANALYSIS_ITERATIONS_H

#include <jansson.h>

#include "analysis/measurement.h"
#include "analysis/training.h"
#include "modeling/iteration.h"
#include "modeling/modeler.h"

#define IT_MIN_VALUES 5
#define IT_NSPEED 3 /* Eq. 6, Eq. 7 (the paper's), Eq. 7 relative */
/* The series after the IT_NQ quantities (it_series): the speedups, then
 * Eq. 7's numerator and denominator as the paper writes them. */
#define IT_S6 IT_NQ             /* Eq. 6 on Eq. 3's t_iter */
#define IT_S7 (IT_NQ + 1)       /* Eq. 7: N_g·max{t_io+t_h2d, t_f+t_b} / max{t'_io+t_h2d, t_f+t_b+t_c} */
#define IT_S7REL (IT_NQ + 2)    /* Eq. 7 as a ratio of each run's own overlapped times */
#define IT_NUM7 (IT_NQ + 5)     /* Eq. 7's numerator: the baseline's max{t_io+t_h2d, t_f+t_b} */
#define IT_DEN7 (IT_NQ + 6)     /* Eq. 7's denominator */

typedef struct it_table {
    int np, nparams;        /* fitting coordinates with iterations, parameters */
    double *coords;         /* np x nparams */
    double *ranks;          /* per coordinate: G·M of the training set-up (NaN: unknown) */
    it_result *res;         /* per coordinate: the statistics of every quantity */
    double *vals;           /* (IT_NQ + IT_NSPEED + 4) x np: the medians per quantity, then
                               the speedups and Eq. 7's parts (it_series, IT_S6 ...) */
    int *pidx;              /* per coordinate: its point in the rows */
    int *cp_phase;          /* per callpath: its phase, IT_C for t_c, -1 none */
    char matched[IT_C][64]; /* per phase: the name part that matched, "" none */
    const char *text[IT_C]; /* per phase: its name parts (the experiment's or the defaults) */
} it_table;

/* The table of d's fitting coordinates with train steps of the time metric
 * (phases by custom, the experiment's "iteration_phases", may be NULL;
 * warm-up steps and G·M from ts). 0 (t->np 0: no coordinate has phase
 * annotations), or -1 when out of memory. */
int it_table_build(it_table *t, const store_fit_data *d, const json_t *custom,
                   const training_setup *ts);
/* Series k over the coordinates: k < IT_NQ the medians of quantity k,
 * then IT_S6, IT_S7, IT_S7REL, IT_NUM7, IT_DEN7 (NaN: unknown). */
const double *it_series(const it_table *t, int k);
/* The PMNF model of v over the coordinates where it is finite: 0, or -1
 * with why (fewer than 2 values of a parameter, the fit's error, out of
 * memory). With 2 to IT_MIN_VALUES - 1 values of a parameter the model is
 * fitted and *few set, why saying so (the few_points warning). */
int it_fit(pmnf_modeler *mod, const it_table *t, const double *v, pmnf_model *model, char *why,
           size_t whycap, int *few);
/* The answer's parts over a built table (d: its rows; params: the
 * experiment's parameters; strong: negative exponents allowed):
 *   points   [{"point","ranks","iterations","<quantity>":{"mean","sd","median"},
 *             "speedup_eq6","speedup_eq7","eq7":{"n_g","numerator","denominator"},
 *             "speedup_eq7_relative"}]
 *   models   {"<quantity>"|"speedup_eq6"|...: the PMNF model (modeling/model_json.h),
 *             or {"function":null,"reason"}; few_points warnings}
 *   phases   {"<phase>":{"patterns","matched","callpaths"}, "t_c":{...}}
 *   warnings [phase_unmatched for a phase no callpath matches]
 * 0, or -1 when out of memory. */
#define IT_WARN_PHASE_UNMATCHED "phase_unmatched"
typedef struct it_doc {
    json_t *points, *models, *phases, *warnings;
} it_doc;
int it_document(const it_table *t, const store_fit_data *d, const char *const *params,
                int strong, it_doc *out);
void it_doc_free(it_doc *doc);
/* "io", "h2d", ...: the key of phase p in "iteration_phases". */
const char *it_phase_key(int p);
void it_table_free(it_table *t);

#endif
