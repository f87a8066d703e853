/*
 * iterations.c — GET /v1/experiments/{id}/iterations: Kavarakuntla et al.'s
 * iteration model of S-SGD (paper 004 Eq. 1-7, modeling/iteration.h) from
 * the phase annotations in an experiment's profiles, per coordinate (mean ±
 * standard deviation and median over the iterations) and modelled over the
 * parameters with the PMNF like every other part.
 *
 * Which callpaths are which phase: name parts (ingest/phase.h matching: case
 * ignored, at the start of a word), per phase in order of preference; the
 * first part that names any callpath of the experiment is the phase's (so a
 * user's own "backward" range is not added to PyTorch's autograd ops). The
 * experiment's "iteration_phases" ({"io":"...", ...}) replaces the defaults
 * per phase. t_c, the gradient aggregation, is the communication callpaths'.
 * A phase that matches nothing counts 0 and gets a warning.
 *
 * Train steps of fitting uploads only, warm-up steps left out; speedups
 * (Eq. 6 on Eq. 3's t_iter, Eq. 7 on the overlapped times) against P_1 of
 * each coordinate's series along x_1, scaled by the ranks N_k/N_1.
 *
 * The table is computed by analysis/iterations.h; this file reads the
 * experiment's rows and renders it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iterations.h"
#include "api/handlers.h"
#include "api/warnings.h"
#include "modeling/model_json.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/models.h"

void api_iterations(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id))
        return;
    for (size_t k = 0; k < req->nquery; k++)
        if (req->query[k].name && !(req->strict_route && !strcmp(req->query[k].name, "strict"))) {
            api_problem(resp, 400, req->query[k].name, "unknown query parameter");
            return;
        }
    store_error err = {0};
    store_experiment e = {0};
    store_fit_data d;
    memset(&d, 0, sizeof d);
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    if (!rc)
        rc = store_fit_data_load(c, id, e.nparams, &d, &err);
    store_release(ctx->db, c);
    it_table t = {0};
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    training_setup ts;
    char field[64], why[400];
    if (training_compile(json_object_get(e.spec, "training"), (const char *const *)e.parameters,
                         e.nparams, &ts, field, sizeof field, why, sizeof why) < 0) {
        api_problem(resp, 409, field, "%s", why);
        goto done;
    }
    if (it_table_build(&t, &d, json_object_get(e.spec, "iteration_phases"), &ts) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int np = t.np;
    if (np == 0) {
        api_problem(resp, 409, NULL,
                    "experiment %lld has no train steps with phase annotations to model", (long long)id);
        goto done;
    }
    it_doc doc;
    if (it_document(&t, &d, (const char *const *)e.parameters, !strcmp(e.scaling, "strong"),
                    &doc) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    api_send_json(resp, 200,
                  json_pack("{s:I, s:s, s:O, s:O, s:O, s:O, s:{s:s, s:s}}", "experiment",
                            (json_int_t)id, "scaling", e.scaling, "phases", doc.phases, "points",
                            doc.points, "models", doc.models, "warnings", doc.warnings, "units",
                            "times", "s per iteration (mean, sample sd, median over the iterations)",
                            "speedup", "ratio (N_k/N_1)·t_1/t_k against P_1 along x_1"));
    it_doc_free(&doc);
done:
    it_table_free(&t);
    store_fit_data_free(&d);
    store_experiment_free(&e);
}
