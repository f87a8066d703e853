/*
 * test_imbalance_rank.c — the ranking behind the imbalance answer
 * (analysis/imbalance_rank.h) on callpaths built here: no server, no
 * database. Larger LIF now first; a callpath not measured at the largest
 * coordinate ranks by the last coordinate it was measured at; never
 * measured: last; ties by name; only the listed items carry warnings, and
 * the tally counts those; the LIF groups' names and order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/imbalance_rank.h"
#include "tests/check.h"
#include "tests/warning_code.h"

#define NPOINTS 5
static const char *const names[] = {"x"};
static const double xs[NPOINTS] = {2, 4, 6, 8, 10};

/* A callpath with LIF medians lifs (NaN: not measured there) and, when
 * fit, a LIF model Extra-P's modeler fits to them. */
static void make_callpath(ad_callpath *c, imb_summary *s, const char *name, const double *lifs,
                          int fit)
{
    memset(c, 0, sizeof *c);
    c->name = (char *)name;
    snprintf(c->category, sizeof c->category, "comp");
    c->lif = s;
    for (int p = 0; p < NPOINTS; p++)
        s[p] = isnan(lifs[p]) ? (imb_summary){0, NAN, NAN, NAN}
                              : (imb_summary){3, lifs[p], lifs[p], lifs[p]};
    if (!fit) {
        snprintf(c->lif_model.reason, sizeof c->lif_model.reason, "too few points");
        return;
    }
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_EXTRAP;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    pmnf_data d = {1, NPOINTS, xs, lifs};
    char err[200];
    c->lif_model.present = mod && pmnf_fit(mod, &d, &c->lif_model.model, err, sizeof err) == 0;
    check(c->lif_model.present, "%s: LIF model fitted", name);
    pmnf_modeler_free(mod);
}

static void test_ranking(void)
{
    static const double growing[NPOINTS] = {1.02, 1.04, 1.06, 1.08, 1.10};
    static const double flat[NPOINTS] = {1.05, 1.05, 1.05, 1.05, 1.05};
    static const double early[NPOINTS] = {1.30, 1.20, NAN, NAN, NAN}; /* 1.20 last measured */
    static const double same[NPOINTS] = {1.05, 1.05, 1.05, 1.05, 1.05};
    static const double never[NPOINTS] = {NAN, NAN, NAN, NAN, NAN};
    ad_callpath v[5];
    imb_summary s[5][NPOINTS];
    /* by name in the input, as the model set keeps them */
    make_callpath(&v[0], s[0], "allreduce", growing, 1);
    make_callpath(&v[1], s[1], "backward", flat, 1);
    make_callpath(&v[2], s[2], "conv", early, 0);
    make_callpath(&v[3], s[3], "copy", same, 1);
    make_callpath(&v[4], s[4], "idle", never, 0);
    ad_callpaths cps = {5, v, NPOINTS};
    int largest = NPOINTS - 1;

    check(imr_lif_now(&v[0], NPOINTS, largest) == 1.10, "now: at the largest coordinate");
    check(imr_lif_now(&v[2], NPOINTS, largest) == 1.20,
          "not measured there: the last coordinate measured");
    check(isnan(imr_lif_now(&v[4], NPOINTS, largest)), "never measured: NaN");
    check(imr_lif_now(&v[0], NPOINTS, 1) == 1.04, "now at another coordinate");

    imr_ranking r;
    check(imr_rank(&cps, largest, 100, NULL, names, &r) == 0, "ranked");
    const char *want[5] = {"conv", "allreduce", "backward", "copy", "idle"};
    check(r.n == 5 && r.listed == 5, "5 ranked, 5 listed: %d %d", r.n, r.listed);
    for (int i = 0; i < r.n && i < 5; i++)
        check(!strcmp(r.v[i].c->name, want[i]), "rank %d: %s, want %s", i + 1, r.v[i].c->name,
              want[i]);
    int with = 0;
    for (int i = 0; i < r.listed; i++) {
        check(r.v[i].warnings && json_is_array(r.v[i].warnings), "%s: a warnings array",
              r.v[i].c->name);
        with += json_array_size(r.v[i].warnings) > 0;
    }
    check(json_array_size(r.v[4].warnings) == 0 && json_array_size(r.v[0].warnings) == 0,
          "no LIF model: no warnings");
    check(r.tally.count == with, "the tally counts the items with warnings: %d %d",
          r.tally.count, with);
    imr_ranking_free(&r);

    /* asked a point beyond 4x the measured range: every model's prediction
     * there warns; callpaths without a model still do not */
    double at[1] = {100};
    check(imr_rank(&cps, largest, 100, at, names, &r) == 0, "ranked at 100");
    for (int i = 0; i < r.listed; i++) {
        int modeled = r.v[i].c->lif_model.present;
        check(modeled == warning_has_code(r.v[i].warnings, "extrapolation_far"),
              "%s at 100: extrapolation_far exactly when it has a LIF model", r.v[i].c->name);
    }
    check(r.tally.count == 3, "3 listed items with warnings at 100: %d", r.tally.count);
    json_t *sum = cpw_summary_json(&r.tally, r.listed, "listed callpaths");
    check(sum && json_integer_value(json_object_get(sum, "count")) == 3 &&
              json_integer_value(json_object_get(sum, "of")) == 5,
          "the summary: 3 of 5");
    json_decref(sum);
    imr_ranking_free(&r);

    /* a limit: the same order, warnings and tally only for the listed ones */
    check(imr_rank(&cps, largest, 2, at, names, &r) == 0, "ranked, limit 2");
    check(r.n == 5 && r.listed == 2 && !strcmp(r.v[0].c->name, "conv") &&
              !strcmp(r.v[1].c->name, "allreduce") && r.v[2].warnings == NULL,
          "limit 2: the first two listed, the rest without warnings");
    check(r.tally.count == 1, "the tally counts the listed only: %d", r.tally.count);
    imr_ranking_free(&r);

    /* no callpaths */
    ad_callpaths none = {0, NULL, NPOINTS};
    check(imr_rank(&none, largest, 100, NULL, names, &r) == 0 && r.n == 0 && r.listed == 0 &&
              r.tally.count == 0,
          "no callpaths: an empty ranking");
    imr_ranking_free(&r);
}

static void test_groups(void)
{
    check(imr_group("step") == 3 && imr_group("comp") == 0 && imr_group("comm") == 1 &&
              imr_group("mem") == 2,
          "group indices");
    check(imr_group("epoch") == -1 && imr_group("") == -1 && imr_group(NULL) == -1,
          "unknown groups");
    check(!strcmp(imr_group_name(imr_group_at(0)), "step") &&
              !strcmp(imr_group_name(imr_group_at(3)), "mem"),
          "the whole step first in the answer");
    check(imr_group_name(AD_GROUPS) == NULL && imr_group_at(-1) == -1, "out of range");
}

int main(void)
{
    test_ranking();
    test_groups();
    return check_summary();
}
