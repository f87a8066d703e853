/*
 * advice.c — the runs to take next for a precise prediction at a target
 * (advice.h): the request, the series, the priced candidates, the answer.
 */
#include "analysis/advice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rank_count.h"
#include "modeling/modeler.h"
#include "modeling/warning_json.h"
#include "sweep/sweep_advice.h"

#define Z975 1.959963984540054

/* ---- the request ------------------------------------------------------------------ */

void advice_request_free(advice_request *a)
{
    for (int i = 0; i < PMNF_MAX_PARAMS; i++)
        free(a->values[i]);
    memset(a, 0, sizeof *a);
}

long advice_candidates(const advice_request *a, int nparams)
{
    long n = 1;
    for (int i = 0; i < nparams; i++)
        if ((n *= a->nvalues[i]) > ADVICE_MAX_CANDIDATES)
            return n;
    return n;
}


static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int add_value(advice_request *a, int p, double v)
{
    for (int i = 0; i < a->nvalues[p]; i++)
        if (a->values[p][i] == v)
            return 0;
    if (a->nvalues[p] == ADVICE_MAX_VALUES)
        return -1;
    a->values[p][a->nvalues[p]++] = v;
    return 0;
}

static int number_field(const json_t *body, const char *name, double dflt, double *out,
                        an_problem *p)
{
    const json_t *v = json_object_get(body, name);
    *out = dflt;
    if (!v && !isnan(dflt))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return an_problem_set(p, 400, name, "must be a number > 0");
    *out = json_number_value(v);
    return 0;
}

/* A coordinate the models can be asked about: > 0 and at most
 * PMNF_MAX_MAGNITUDE (the largest the modeler takes). */
static int coordinate_ok(const json_t *v)
{
    double x = json_number_value(v);
    return json_is_number(v) && x > 0 && x <= PMNF_MAX_MAGNITUDE;
}

static int param_index(const char *const *params, int nparams, const char *name)
{
    for (int i = 0; i < nparams; i++)
        if (!strcmp(params[i], name))
            return i;
    return -1;
}

static int parse_target(const json_t *body, const char *const *params, int nparams,
                        advice_request *a, an_problem *p)
{
    const json_t *t = json_object_get(body, "target");
    if (!json_is_object(t))
        return an_problem_set(p, 400, "target", "must be an object with a value of every parameter");
    const char *key;
    json_t *v;
    char f[120];
    json_object_foreach((json_t *)t, key, v)
    {
        snprintf(f, sizeof f, "target.%s", key);
        if (param_index(params, nparams, key) < 0)
            return an_problem_set(p, 400, f, "not a parameter of the experiment");
        if (!coordinate_ok(v))
            return an_problem_set(p, 400, f, "must be a number > 0 and at most %g (the largest "
                                  "coordinate perfcast models)", PMNF_MAX_MAGNITUDE);
    }
    for (int i = 0; i < nparams; i++) {
        const json_t *x = json_object_get(t, params[i]);
        if (!x) {
            snprintf(f, sizeof f, "target.%s", params[i]);
            return an_problem_set(p, 400, f, "missing: the target needs a value of every parameter");
        }
        a->target[i] = json_number_value(x);
    }
    return 0;
}

/* every parameter's candidate values: the listed ones, or the measured ones
 * and the largest doubled up to the target */
static int parse_candidates(const json_t *body, const char *const *params, int nparams,
                            const store_measurement_row *rows, int n, advice_request *a,
                            an_problem *p)
{
    for (int i = 0; i < nparams; i++)
        if (!(a->values[i] = malloc(sizeof(double) * ADVICE_MAX_VALUES)))
            return an_problem_set(p, 500, NULL, "out of memory");
    const json_t *c = json_object_get(body, "candidates");
    if (c && !json_is_object(c))
        return an_problem_set(p, 400, "candidates", "must be an object of parameter names with values");
    char f[120];
    for (int i = 0; i < nparams; i++) {
        const json_t *list = json_object_get(c, params[i]);
        snprintf(f, sizeof f, "candidates.%s", params[i]);
        if (list) {
            size_t j;
            json_t *x;
            if (!json_is_array(list) || json_array_size(list) == 0)
                return an_problem_set(p, 400, f, "must be a non-empty array of numbers > 0");
            json_array_foreach(list, j, x)
            {
                if (!coordinate_ok(x) || add_value(a, i, json_number_value(x)) < 0)
                    return an_problem_set(p, 400, f, "must be at most %d numbers > 0 and at most "
                                          "%g each", ADVICE_MAX_VALUES, PMNF_MAX_MAGNITUDE);
            }
        } else {
            double hi = 0;
            for (int r = 0; r < n; r++) {
                if (add_value(a, i, rows[r].point[i]) < 0)
                    return an_problem_set(p, 400, f, "more than %d measured values: name the candidates",
                                  ADVICE_MAX_VALUES);
                hi = fmax(hi, rows[r].point[i]);
            }
            for (double x = 2 * hi; hi > 0 && x < a->target[i] && a->nvalues[i] < ADVICE_MAX_VALUES;
                 x *= 2)
                add_value(a, i, x);
        }
        qsort(a->values[i], (size_t)a->nvalues[i], sizeof(double), cmp_d);
    }
    if (c) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)c, key, v)
        {
            if (param_index(params, nparams, key) < 0) {
                snprintf(f, sizeof f, "candidates.%s", key);
                return an_problem_set(p, 400, f, "not a parameter of the experiment");
            }
        }
    }
    return 0;
}

int advice_request_parse(const json_t *body, const char *const *params, int nparams,
                         const store_measurement_row *rows, int n, advice_request *a,
                         an_problem *p)
{
    memset(a, 0, sizeof *a);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)body, key, v)
    {
        if (strcmp(key, "target") && strcmp(key, "budget_core_hours") &&
            strcmp(key, "epochs_per_run") && strcmp(key, "candidates") && strcmp(key, "max_runs") &&
            strcmp(key, "grid_core_hours"))
            return an_problem_set(p, 400, key, "unknown field (known: target, budget_core_hours, "
                                   "epochs_per_run, candidates, max_runs, grid_core_hours)");
    }
    if (parse_target(body, params, nparams, a, p) < 0)
        return -1;
    if (number_field(body, "budget_core_hours", NAN, &a->budget, p) < 0 ||
        number_field(body, "epochs_per_run", 1, &a->epochs_per_run, p) < 0 ||
        (json_object_get(body, "grid_core_hours") &&
         number_field(body, "grid_core_hours", NAN, &a->grid, p) < 0))
        return -1;
    const json_t *mr = json_object_get(body, "max_runs");
    a->max_runs = 200;
    if (mr) {
        if (!json_is_integer(mr) || json_integer_value(mr) < 1 ||
            json_integer_value(mr) > ADVICE_MAX_RUNS)
            return an_problem_set(p, 400, "max_runs", "must be an integer from 1 to %d", ADVICE_MAX_RUNS);
        a->max_runs = (int)json_integer_value(mr);
    }
    return parse_candidates(body, params, nparams, rows, n, a, p);
}

/* ---- the advice ------------------------------------------------------------------- */

static json_t *number_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const advice_in *in, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; o && i < in->nparams; i++)
        json_object_set_new(o, in->params[i], json_real(point[i]));
    return o;
}

/* {"value":v,"interval":[lo,hi]|null} */
static json_t *estimate_json(const advice_estimate *p)
{
    json_t *interval = p->has_interval && isfinite(p->lo) && isfinite(p->hi)
                           ? json_pack("[f, f]", p->lo, p->hi)
                           : json_null();
    return json_pack("{s:o, s:o}", "value", number_json(p->value), "interval", interval);
}

/* The series: per part with a model, its measured coordinates and noise. */
typedef struct series_data {
    double *coords;
    int *reps;
    int n;
} series_data;

static int build_series(const advice_in *in, sweep_adv_series *s, series_data *d, json_t *noise)
{
    static const char *const names[4] = {"comp", "comm", "mem", "epoch"};
    const pmnf_model *const *parts = in->parts;
    int np = in->nparams, nrows = in->nrows;
    int composed = parts[0] && parts[1] && parts[2];
    int ns = 0;
    for (int g = composed ? 0 : 3; g < (composed ? 3 : 4); g++) {
        if (!parts[g])
            continue;
        series_data *x = &d[ns];
        x->coords = malloc(sizeof(double) * (size_t)(nrows ? nrows : 1) * (size_t)np);
        x->reps = malloc(sizeof(int) * (size_t)(nrows ? nrows : 1));
        if (!x->coords || !x->reps)
            return -1;
        double cv2 = 0;
        int ncv = 0;
        for (int r = 0; r < nrows; r++) {
            const store_measurement_row *row = &in->rows[r];
            if (strcmp(row->name, names[g]) || row->nreps < 1)
                continue;
            memcpy(x->coords + (size_t)x->n * np, row->point, sizeof(double) * (size_t)np);
            x->reps[x->n++] = row->nreps;
            if (row->nreps >= 2) {
                double mean = 0, ss = 0;
                for (int k = 0; k < row->nreps; k++)
                    mean += row->reps[k] / row->nreps;
                for (int k = 0; k < row->nreps; k++)
                    ss += (row->reps[k] - mean) * (row->reps[k] - mean);
                if (mean != 0) {
                    cv2 += ss / (row->nreps - 1) / (mean * mean);
                    ncv++;
                }
            }
        }
        if (x->n == 0) { /* a part never measured (no callpath of its category) */
            free(x->coords);
            free(x->reps);
            memset(x, 0, sizeof *x);
            continue;
        }
        double sigma = parts[g]->sigma2 > 0 ? sqrt(parts[g]->sigma2) : 0;
        s[ns] = (sweep_adv_series){&parts[g]->f, x->n, x->coords, x->reps,
                                   ncv ? sqrt(cv2 / ncv) : 0, sigma, 0};
        if (s[ns].cv <= 0 && !(sigma > 0))
            s[ns].sigma = 1e-9 * fmax(1, fabs(pmnf_model_eval(parts[g], x->coords)));
        s[ns].misfit = sweep_advice_misfit(&parts[g]->f, x->coords, x->reps, x->n, s[ns].cv,
                                           sigma);
        json_object_set_new(noise, names[g],
                            ncv ? json_pack("{s:f, s:s}", "cv", s[ns].cv, "from",
                                            "repetitions (pooled run-to-run variation)")
                                : json_pack("{s:f, s:s}", "sd", s[ns].sigma, "from",
                                            "the fit's residual spread (no repetitions)"));
        json_object_set_new(json_object_get(noise, names[g]), "misfit",
                            number_json(s[ns].misfit));
        ns++;
    }
    return ns;
}

static json_t *half_width_json(double var)
{
    return number_json(Z975 * sqrt(var));
}

/* candidate k of r (the product of the values, last parameter fastest) into x */
static void candidate_point(const advice_in *in, const advice_request *r, long k, double *x)
{
    long q = k;
    for (int i = in->nparams - 1; i >= 0; i--) {
        x[i] = r->values[i][q % r->nvalues[i]];
        q /= r->nvalues[i];
    }
}

/* 1 when a run at x cannot be allocated: its rank count is > 0 but it or
 * one of its degrees is not a whole number (analysis/rank_count.h) */
static int not_whole(const advice_in *in, const double *x, double ranks)
{
    double dp = NAN, mp = NAN;
    if (in->ops->degrees && in->ops->degrees(in->models, x, &dp, &mp) < 0)
        dp = mp = NAN;
    return !rank_count_whole(ranks, dp, mp);
}

/* Candidates left out: how many, the first. */
typedef struct left_out {
    long n;
    long first;
} left_out;

/* every candidate point and the core-hours of a run there (-1: not
 * priceable, never picked). Counted into no_ranks: the candidates without a
 * rank count (G·M not > 0: no run there can be priced or uploaded); into
 * frac: those whose rank count is not a whole number (no run there can be
 * allocated). */
static void price(const advice_in *in, const advice_request *r, long ncand, double *cand,
                  double *cost, left_out *no_ranks, left_out *frac)
{
    *no_ranks = *frac = (left_out){0, -1};
    for (long k = 0; k < ncand; k++) {
        double *x = cand + (size_t)k * in->nparams;
        candidate_point(in, r, k, x);
        advice_estimate t = in->ops->epoch(in->models, x);
        double ranks = in->ops->ranks(in->models, x);
        cost[k] = r->epochs_per_run * t.value * ranks * in->cores_per_rank / 3600;
        if (!isfinite(cost[k]) || cost[k] <= 0)
            cost[k] = -1; /* not priceable: never picked */
        left_out *lo = !(ranks > 0) ? no_ranks : not_whole(in, x, ranks) ? frac : NULL;
        if (lo) {
            cost[k] = -1;
            if (lo->n++ == 0)
                lo->first = k;
        }
    }
}

int advice_check_whole(const advice_in *in, const advice_request *r, an_problem *p)
{
    long ncand = advice_candidates(r, in->nparams);
    if (ncand > ADVICE_MAX_CANDIDATES || ncand == 0)
        return 0;
    double x[PMNF_MAX_PARAMS], first[PMNF_MAX_PARAMS], dp = NAN, mp = NAN, fr = NAN;
    int any = 0;
    for (long k = 0; k < ncand; k++) {
        candidate_point(in, r, k, x);
        double ranks = in->ops->ranks(in->models, x);
        if (!(ranks > 0) || !not_whole(in, x, ranks))
            return 0;
        if (!any++) {
            memcpy(first, x, sizeof x);
            fr = ranks;
            if (in->ops->degrees && in->ops->degrees(in->models, x, &dp, &mp) < 0)
                dp = mp = NAN;
        }
    }
    /* the field: the one parameter with fractional candidate values, if one */
    int which = 0, count = 0;
    for (int i = 0; i < in->nparams; i++) {
        int frac = 0;
        for (int k = 0; k < r->nvalues[i] && !frac; k++)
            frac = !rank_count_is_whole(r->values[i][k]);
        if (frac && count++ == 0)
            which = i;
    }
    if (in->nparams == 1)
        count = 1;
    char field[128], at[300], text[200];
    snprintf(field, sizeof field, count == 1 ? "candidates.%s" : "candidates",
             count == 1 ? in->params[which] : "");
    an_point_text(in->params, in->nparams, first, 10, at, sizeof at);
    rank_count_text(fr, dp, mp, text, sizeof text);
    return an_problem_set(p, 400, field,
                          "no candidate can be allocated: at every one the rank count "
                          "training.data_parallel × training.model_parallel (or one of its "
                          "degrees) is not a whole number (at %s: %s), and no run there can be "
                          "made; give candidates whose rank count is whole",
                          at, text);
}

/* The coded warning code first among the answer's warnings: lo->n
 * candidates (the first at x) were left out, for why. */
static void warn_left_out(const advice_in *in, json_t *doc, const char *code, const char *why,
                          const left_out *lo, const double *x)
{
    json_t *w = json_pack("{s:s, s:s, s:I, s:o}", "code", code, "message", why, "candidates",
                          (json_int_t)lo->n, "point", point_json(in, x));
    json_t *warns = json_object_get(doc, "warnings");
    if (w && json_is_array(warns))
        json_array_insert_new(warns, 0, w);
    else
        json_decref(w);
}

/* The answer's coded warnings: the grid's cost kept a run out
 * (grid_cost_reached); the runs measured already cost more than the grid
 * (costlier_than_grid); the best run costs more than the budget
 * (best_run_beyond_budget); then those of the models the advice rests on
 * (the parts build_series reads: poor_fit, few_points, ...), each naming
 * its model, as a prediction from them says. */
static json_t *warnings(const advice_in *in, const sweep_adv_result *res, const double *cand)
{
    json_t *warns = json_array();
    json_t *model_warns = json_array();
    static const char *const names[4] = {"comp time", "comm time", "mem time", "epoch time"};
    int composed = in->parts[0] && in->parts[1] && in->parts[2];
    for (int g = composed ? 0 : 3; model_warns && g < (composed ? 3 : 4); g++) {
        if (!in->parts[g])
            continue;
        json_t *arr = pmnf_warnings_json(in->parts[g], in->params, names[g]);
        json_array_extend(model_warns, arr);
        json_decref(arr);
    }
    if (res->grid_bound)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:f, s:f, s:f}", "code", "grid_cost_reached", "message",
            "more runs would make the measured and recommended ones cost more than the grid "
            "this advice replaces (grid_core_hours, default one run at every candidate): "
            "measuring the grid would cost less", "grid_core_hours", res->grid_core_hours,
            "measured_core_hours", res->measured_core_hours, "planned_core_hours", res->spent));
    if (res->costlier_than_grid)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:f, s:f, s:f}", "code", "costlier_than_grid", "message",
            "the runs measured at the candidates already cost more than the grid this advice "
            "replaces (grid_core_hours, default one run at every candidate)", "grid_core_hours",
            res->grid_core_hours, "measured_core_hours", res->measured_core_hours,
            "planned_core_hours", res->spent));
    if (res->beyond_budget >= 0)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:o, s:f}", "code", "best_run_beyond_budget", "message",
            "the run that narrows the interval most per core-hour costs more than the budget: "
            "the recommendations are lesser runs", "point",
            point_json(in, cand + (size_t)res->beyond_budget * in->nparams), "core_hours",
            res->beyond_budget_core_hours));
    json_array_extend(warns, model_warns);
    json_decref(model_warns);
    return warns;
}

static json_t *answer(const advice_in *in, const advice_request *r, const sweep_adv_result *res,
                      const double *cand, long ncand, json_t *noise)
{
    json_t *recs = json_array();
    for (int i = 0; i < res->npicks; i++) {
        const sweep_adv_pick *pk = &res->picks[i];
        const double *x = cand + (size_t)pk->cand * in->nparams;
        int measured = 0;
        for (int q = 0; q < in->nrows; q++)
            if (!memcmp(in->rows[q].point, x, sizeof(double) * (size_t)in->nparams) &&
                !strcmp(in->rows[q].name, "epoch"))
                measured = in->rows[q].nreps;
        json_array_append_new(
            recs, json_pack("{s:o, s:i, s:i, s:f, s:f, s:f}", "point", point_json(in, x), "runs",
                            pk->runs, "measured_repetitions", measured, "core_hours",
                            pk->core_hours, "core_hours_per_run", pk->core_hours / pk->runs,
                            "variance_share_pct",
                            res->var_before > 0 ? 100 * pk->gain / res->var_before : 0.0));
    }
    advice_estimate at = in->ops->epoch(in->models, r->target);
    double shrink = res->var_before > 0 ? 100 * (1 - sqrt(res->var_after / res->var_before)) : 0;
    json_t *doc = json_pack(
        "{s:I, s:i, s:o, s:f, s:f, s:f, s:i, s:o, s:{s:o, s:o}, s:o, s:o, s:s, s:o, s:o}",
        "experiment", (json_int_t)in->experiment, "model_set", in->set_number, "target",
        point_json(in, r->target), "budget_core_hours", r->budget, "spent_core_hours", res->spent,
        "epochs_per_run", r->epochs_per_run, "runs", res->nruns, "prediction", estimate_json(&at),
        "mean_half_width_s", "now", half_width_json(res->var_before), "after",
        half_width_json(res->var_after), "expected_shrink_pct", number_json(shrink),
        "recommendations", recs, "criterion",
        res->robust ? "the runs that lower the variance of the predicted mean at the target most "
                      "per core-hour, for the fitted terms plus challengers next to each "
                      "parameter's leading term (so that a wrong choice of terms shows)"
                    : "the runs that lower the variance of the predicted mean at the target most "
                      "per core-hour, for the fitted terms",
        "noise", noise, "candidates", json_integer(ncand));
    if (!doc)
        return NULL;
    json_object_set_new(doc, "extrapolation", in->ops->extrapolation(in->models, r->target));
    json_object_set_new(doc, "warnings", warnings(in, res, cand));
    json_object_set_new(doc, "units", json_pack("{s:s, s:s}", "core_hours",
                                                "core-h: epochs_per_run × T × ranks × "
                                                "cores_per_rank / 3600 per run",
                                                "mean_half_width_s", "s, 95% (normal), of the "
                                                "predicted mean"));
    return doc;
}

int advice_compute(const advice_in *in, const advice_request *r, json_t **out, char *msg,
                   size_t msgcap)
{
    *out = NULL;
    msg[0] = '\0';
    long ncand = advice_candidates(r, in->nparams);
    if (ncand > ADVICE_MAX_CANDIDATES)
        return ADVICE_TOO_MANY;
    series_data sd[4];
    memset(sd, 0, sizeof sd);
    sweep_adv_series series[4];
    sweep_adv_result res = {0};
    double *cand = NULL, *cost = NULL;
    json_t *noise = json_object();
    int rc = ADVICE_NOMEM;
    int ns = noise ? build_series(in, series, sd, noise) : -1;
    if (ns <= 0) {
        rc = ns < 0 ? ADVICE_NOMEM : ADVICE_NO_MODEL;
        goto done;
    }
    cand = malloc(sizeof(double) * (size_t)ncand * (size_t)in->nparams);
    cost = malloc(sizeof(double) * (size_t)ncand);
    if (!cand || !cost)
        goto done;
    left_out no_ranks, frac;
    price(in, r, ncand, cand, cost, &no_ranks, &frac);
    sweep_adv_problem p = {in->nparams, ns, series, r->target, (int)ncand, cand, cost, r->budget,
                           r->max_runs, 1, r->grid, 0};
    if (sweep_advise(&p, &res, msg, msgcap) < 0) {
        rc = ADVICE_FAILED;
        goto done;
    }
    *out = answer(in, r, &res, cand, ncand, noise);
    noise = NULL;
    if (*out && frac.n) {
        char why[600], count[200];
        const double *x = cand + (size_t)frac.first * in->nparams;
        double dp = NAN, mp = NAN;
        if (in->ops->degrees && in->ops->degrees(in->models, x, &dp, &mp) < 0)
            dp = mp = NAN;
        rank_count_text(in->ops->ranks(in->models, x), dp, mp, count, sizeof count);
        snprintf(why, sizeof why,
                 "candidates where the rank count training.data_parallel × "
                 "training.model_parallel (or one of its degrees) is not a whole number, which "
                 "no scheduler can allocate, were left out: no run is recommended there (the "
                 "first: %s)",
                 count);
        warn_left_out(in, *out, RANK_COUNT_WARN_NOT_WHOLE, why, &frac, x);
    }
    if (*out && no_ranks.n)
        warn_left_out(in, *out, "no_ranks",
                      "candidates where the rank count training.data_parallel × "
                      "training.model_parallel is not > 0 have no core-hours and no run "
                      "there could be uploaded: they were left out",
                      &no_ranks, cand + (size_t)no_ranks.first * in->nparams);
    rc = *out ? ADVICE_OK : ADVICE_NOMEM;
done:
    json_decref(noise);
    sweep_advice_free(&res);
    free(cand);
    free(cost);
    for (int i = 0; i < 4; i++) {
        free(sd[i].coords);
        free(sd[i].reps);
    }
    return rc;
}
