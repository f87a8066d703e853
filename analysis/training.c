/*
 * training.c — the training set-up of an experiment as compiled expressions
 * and the steps per epoch they give at a coordinate (see training.h).
 */
#include "analysis/training.h"

#include <stdio.h>
#include <string.h>

#include "analysis/problem.h"
#include "modeling/aggregate.h"

static const char *const keys[TRAINING_NEXPR] = {"train_samples", "validation_samples",
                                                 "batch_size", "data_parallel",
                                                 "model_parallel"};

const char *training_key(int k)
{
    return k >= 0 && k < TRAINING_NEXPR ? keys[k] : "";
}

int training_is_constant(const training_setup *s, int k, int nnames)
{
    for (int i = 0; i < nnames; i++)
        if (expr_uses(&s->e[k], i))
            return 0;
    return 1;
}

int training_compile(const json_t *training, const char *const *names, int nnames,
                     training_setup *out, char *field, size_t fieldcap, char *msg, size_t msgcap)
{
    memset(out, 0, sizeof *out);
    const char *dflt[TRAINING_NEXPR] = {NULL, "0", NULL, nnames > 0 ? names[0] : "1", "1"};
    for (int k = 0; k < TRAINING_NEXPR; k++) {
        const json_t *v = json_object_get(training, keys[k]);
        char num[64], why[200];
        const char *src = dflt[k];
        snprintf(field, fieldcap, "training.%s", keys[k]);
        if (json_is_string(v)) {
            src = json_string_value(v);
        } else if (json_is_number(v)) {
            snprintf(num, sizeof num, "%.17g", json_number_value(v));
            src = num;
        } else if (v && !json_is_null(v)) {
            snprintf(msg, msgcap, "must be an integer or an expression of the parameters");
            return -1;
        }
        if (!src) {
            snprintf(msg, msgcap, "is required");
            return -1;
        }
        if (expr_compile(src, names, nnames, &out->e[k], why, sizeof why) < 0) {
            snprintf(msg, msgcap, "%s", why);
            return -1;
        }
    }
    const json_t *w = json_object_get(training, "warmup_steps");
    out->warmup_steps = json_is_number(w) ? (int)json_number_value(w) : 0;
    field[0] = '\0';
    return 0;
}

/* "ranks=8, batch=32" */
static void point_text(const double *point, const char *const *names, int nnames, char *buf,
                       size_t cap)
{
    an_point_text(names, nnames, point, 17, buf, cap);
    if (nnames == 0)
        snprintf(buf, cap, "every coordinate");
}

/* Expression k of s at point (the coordinate's text at): 0 with its value in
 * *v when it is > 0 (validation_samples: >= 0), else -1 with the field and
 * the rule broken. */
static int expr_check(const training_setup *s, int k, const double *point, const char *at,
                      double *v, char *field, size_t fieldcap, char *msg, size_t msgcap)
{
    int bad = expr_eval(&s->e[k], point, v) < 0;
    const char *want = k == TRAINING_DV ? ">= 0" : "> 0";
    bad = bad || (k == TRAINING_DV ? !(*v >= 0) : !(*v > 0));
    if (!bad)
        return 0;
    snprintf(field, fieldcap, "training.%s", keys[k]);
    snprintf(msg, msgcap, "must be %s at every coordinate; at %s it is not", want, at);
    return -1;
}

int training_degrees_at(const training_setup *s, const double *point, const char *const *names,
                        int nnames, char *field, size_t fieldcap, char *msg, size_t msgcap)
{
    double v;
    char at[300];
    point_text(point, names, nnames, at, sizeof at);
    if (expr_check(s, TRAINING_G, point, at, &v, field, fieldcap, msg, msgcap) < 0 ||
        expr_check(s, TRAINING_M, point, at, &v, field, fieldcap, msg, msgcap) < 0)
        return -1;
    return 0;
}

int training_steps_at(const training_setup *s, const double *point, const char *const *names,
                      int nnames, double *n_t, double *n_v, char *field, size_t fieldcap,
                      char *msg, size_t msgcap)
{
    double v[TRAINING_NEXPR];
    char at[300];
    point_text(point, names, nnames, at, sizeof at);
    for (int k = 0; k < TRAINING_NEXPR; k++)
        if (expr_check(s, k, point, at, &v[k], field, fieldcap, msg, msgcap) < 0)
            return -1;
    agg_training t = {v[TRAINING_DT], v[TRAINING_DV], v[TRAINING_B]};
    if (agg_steps_per_epoch(&t, v[TRAINING_G], v[TRAINING_M], n_t, n_v) < 0 || !(*n_t >= 1)) {
        snprintf(field, fieldcap, "training.train_samples");
        snprintf(msg, msgcap,
                 "gives no training step per epoch at %s: floor(train_samples %.17g / "
                 "(data_parallel %.17g / model_parallel %.17g) / batch_size %.17g) = 0",
                 at, v[TRAINING_DT], v[TRAINING_G], v[TRAINING_M], v[TRAINING_B]);
        return -1;
    }
    return 0;
}
