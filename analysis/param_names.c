/*
 * param_names.c — names reserved for perfcast's built-ins (param_names.h).
 */
#include "analysis/param_names.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modeling/expr.h"

static const struct {
    const char *name, *why;
} reserved[] = {
    {"T", "the seconds per epoch in cost formulas"},
    {"cores_per_rank", "a built-in of cost formulas"},
    {"price_per_core_hour", "a built-in of cost formulas"},
    {"epoch", "the application's epoch time in models and answers"},
    {"comp", "the application's computation part in models and answers"},
    {"comm", "the application's communication part in models and answers"},
    {"mem", "the application's memory part in models and answers"},
    {"metric", "a query parameter of predict and the analyses"},
    {"epochs", "a query parameter of cost"},
    {"from", "a query parameter of scaling"},
    {"to", "a query parameter of scaling"},
    {"step", "a query parameter of scaling"},
    {"values", "a query parameter of scaling"},
    {"parameter", "a query parameter of scaling"},
    {"format", "a query parameter of uploads"},
    {"repetition", "a query parameter of uploads"},
    {"rank", "a query parameter of uploads (the rank of a trace)"},
    {"markers", "a query parameter of uploads"},
    {"refit", "a query parameter of uploads"},
    {"commit", "a query parameter of uploads"},
    {"branch", "a query parameter of uploads"},
    {"ci_run", "a query parameter of uploads"},
};

int param_name_check(const char *name, char *msg, size_t cap)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (!strcmp(reserved[i].name, name)) {
            snprintf(msg, cap,
                     "\"%s\" is a built-in name (%s); call the parameter something else, "
                     "e.g. \"p_%s\"",
                     name, reserved[i].why, name);
            return -1;
        }
    return 0;
}

int param_ranks_check(const char *const *names, int n, const char *dp, const char *mp,
                      int *index, char *msg, size_t cap)
{
    int r = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], "ranks"))
            r = i;
    *index = r;
    if (r < 0)
        return 0;
    expr g, m;
    char why[160];
    int ok = !expr_compile(dp, names, n, &g, why, sizeof why) &&
             !expr_compile(mp, names, n, &m, why, sizeof why);
    /* sample points: ranks and the other parameters at unrelated values */
    static const double samples[] = {1, 2, 3, 8, 12, 64, 1000, 4096};
    double vals[16] = {0}, gv = 0, mv = 0;
    for (size_t s = 0; ok && s < sizeof samples / sizeof *samples; s++) {
        for (int i = 0; i < n && i < 16; i++)
            vals[i] = i == r ? samples[s] : 2.0 + (double)((s * 7 + (size_t)i * 3) % 11);
        ok = !expr_eval(&g, vals, &gv) && !expr_eval(&m, vals, &mv) &&
             fabs(gv * mv - samples[s]) <= 1e-9 * samples[s];
    }
    if (ok)
        return 0;
    snprintf(msg, cap,
             "\"ranks\" is the rank count G·M (training.data_parallel × training.model_parallel "
             "= (%s) × (%s)) in cost formulas, answers and candidates, and this parameter is not "
             "it; call it something else (e.g. \"gpus\" or \"workers\"), or make it the rank "
             "count (data_parallel \"ranks\", model_parallel \"1\")",
             dp, mp);
    return -1;
}
