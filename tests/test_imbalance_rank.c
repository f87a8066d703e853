/*
 * test_imbalance_rank.c — the ranking behind the imbalance answer
 * (analysis/imbalance_rank.h) on callpaths built here: no server, no
 * database. Larger LIF now first; a callpath not measured at the largest
 * coordinate ranks by the last coordinate it was measured at; never
 * measured: last; ties by name; only the listed items carry warnings, and
 * the tally counts those; the LIF groups' names and order. A LIF predicted
 * by its model is never below 1 (max over ranks >= mean): an interval
 * reaching below 1 around a value above stops at 1, and a value below 1
 * (a falling LIF extrapolated) carries the warning lif_below_one.
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

/* LIFs falling with x, 1.30 at 2 to 1.10 at 10 (0.05 per 2): Extra-P's
 * modeler fits them exactly, 1.35 - 0.025·x, which is 1.05 at 12, 1.0 at
 * 14 and 0.85 at 20: below 1, the smallest LIF there is. LIFs around 1 with
 * noise (mean 1.00184, sd 0.00106 over 5 points): a prediction interval of
 * about ±t(4)·sd·sqrt(1 + 1/5) = ±0.0032 reaches below 1 where the model
 * gives no interval end below 1. */
static void test_lif_below_one(void)
{
    static const double falling[NPOINTS] = {1.30, 1.25, 1.20, 1.15, 1.10};
    static const double near_one[NPOINTS] = {1.0010, 1.0032, 1.0008, 1.0027, 1.0015};
    ad_callpath v[2];
    imb_summary s[2][NPOINTS];
    make_callpath(&v[0], s[0], "falling", falling, 1);
    make_callpath(&v[1], s[1], "near_one", near_one, 1);
    ad_callpaths cps = {2, v, NPOINTS};
    double at20[1] = {20}, at12[1] = {12}, at10[1] = {10};

    double value, lo, hi;
    int below;
    imr_lif_predict(&v[0].lif_model.model, at20, &value, &lo, &hi, &below);
    check(fabs(value - 0.85) < 1e-9 && below == 1, "falling at 20: %.12g (1.35 - 0.025·20 = 0.85), "
          "below 1", value);
    imr_lif_predict(&v[0].lif_model.model, at12, &value, &lo, &hi, &below);
    check(fabs(value - 1.05) < 1e-9 && below == 0 && lo >= 1 && lo <= value && value <= hi,
          "falling at 12: %.12g in [%.12g, %.12g], not below 1", value, lo, hi);

    imr_ranking r;
    check(imr_rank(&cps, NPOINTS - 1, 100, at20, names, &r) == 0, "ranked at 20");
    for (int i = 0; i < r.listed; i++) {
        int falling_one = !strcmp(r.v[i].c->name, "falling");
        check(warning_has_code(r.v[i].warnings, IMR_LIF_BELOW_ONE) == falling_one,
              "%s at 20: lif_below_one %s", r.v[i].c->name, falling_one ? "given" : "not given");
    }
    check(r.tally.count >= 1, "the tally counts it");
    imr_ranking_free(&r);
    check(imr_rank(&cps, NPOINTS - 1, 100, at12, names, &r) == 0, "ranked at 12");
    for (int i = 0; i < r.listed; i++)
        check(!warning_has_code(r.v[i].warnings, IMR_LIF_BELOW_ONE), "%s at 12: no lif_below_one",
              r.v[i].c->name);
    imr_ranking_free(&r);

    /* the interval of a value above 1 stops at 1 */
    double rlo, rhi, rv;
    int has = pmnf_predict(&v[1].lif_model.model, at10, &rv, &rlo, &rhi) == 0;
    check(has && rlo < 1 && rv > 1, "premise: the model's own interval [%.6g, %.6g] around %.6g "
          "reaches below 1", rlo, rhi, rv);
    has = imr_lif_predict(&v[1].lif_model.model, at10, &value, &lo, &hi, &below);
    check(has && value == rv && lo == 1 && hi == rhi && !below,
          "near 1: %.6g in [%.6g, %.6g], the lower end raised to 1", value, lo, hi);

    /* the arithmetic alone */
    lo = 0.9990;
    hi = 1.0059;
    check(imb_lif_bound(1.0025, &lo, &hi) == 0 && lo == 1 && hi == 1.0059, "[0.9990, 1.0059] "
          "around 1.0025 -> [1, 1.0059]");
    lo = 0.966;
    hi = 0.975;
    check(imb_lif_bound(0.97, &lo, &hi) == 1 && lo == 0.966 && hi == 0.975,
          "0.97: below 1, kept for the warning");
    check(imb_lif_bound(NAN, &lo, &hi) == 1, "not a number: not a LIF");
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
    test_lif_below_one();
    test_groups();
    return check_summary();
}
