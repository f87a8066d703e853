/*
 * test_widening.c — a robust constant's interval widened by the spread of
 * the competing hypotheses as far as the point lies from the data
 * (pmnf_model.widen, pmnf_predict in modeling/modeler.c); a growing model
 * keeps the largest widening everywhere.
 *
 * pmnf_predict's half-width is t sqrt(sigma2 q s + noise), q = g' C g from
 * the stored covariance (which carries the largest kappa^2, selection) and
 * s the share that holds at the point: the profile's largest kappa^2 up to
 * the point's distance over selection. So with the same model and the
 * profile cleared (s = 1, one widening everywhere, what models stored
 * before the profile get),
 *   (half^2 - t^2 noise) / (half_1^2 - t^2 noise) = s
 * exactly, which is checked at 2x (s = widen[0] / selection), at 2^1.5 x
 * (the mean of widen[0] and widen[1], log-linear), at 4x, at 8x and 16x
 * (s = 1), inside the data (widen[0]) and below the smallest coordinate
 * (downward: s = 1).
 *
 * The case is the one a user met: five points at 2..32 measured 99.9, 100
 * and 100.1 each, a constant of 100. Its interval was [69.6, 130.4] at 64,
 * 128 and 256 alike (the hypotheses' spread at 8x, applied everywhere);
 * the half-width must now grow with the distance and stay within 1% at 2x.
 * The profile survives the model's JSON form (api_model_to_json /
 * api_model_from_json), and a document without it predicts as before. A
 * growing series (10 x with 1% noise in its repetitions) keeps s = 1 at
 * every distance, whatever its profile.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modeling/model_json.h"
#include "modeling/modeler.h"
#include "tests/check.h"

static double half_width(const pmnf_model *m, double x)
{
    double v, lo, hi;
    if (pmnf_predict(m, &x, &v, &lo, &hi) != 0)
        return NAN;
    return (hi - lo) / 2;
}

/* s at x by the identity above; noise is max(sigma2, noise_rel2 v^2). */
static double share_at(const pmnf_model *m, double x)
{
    pmnf_model one = *m;
    memset(one.widen, 0, sizeof one.widen);
    double v = pmnf_model_eval(m, &x), noise = m->sigma2;
    if (m->noise_rel2 * v * v > noise)
        noise = m->noise_rel2 * v * v;
    double tn = m->t975 * m->t975 * noise, h = half_width(m, x), h1 = half_width(&one, x);
    return (h * h - tn) / (h1 * h1 - tn);
}

static void share_is(const pmnf_model *m, double x, double want, const char *what)
{
    double s = share_at(m, x);
    check(check_close(s, want, 1e-9, 1e-12), "%s (x = %g): share %.12g, want %.12g", what, x, s,
          want);
}

int main(void)
{
    pmnf_numeric_init();
    static const double x[5] = {2, 4, 8, 16, 32};
    double y[5], reps[15];
    int start[6];
    for (int i = 0; i < 5; i++) {
        y[i] = 100;
        start[i] = 3 * i;
        reps[3 * i] = 99.9;
        reps[3 * i + 1] = 100;
        reps[3 * i + 2] = 100.1;
    }
    start[5] = 15;
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_ROBUST;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    pmnf_data d = {1, 5, x, y};
    pmnf_reps r = {start, reps};
    pmnf_model m;
    char err[160];
    if (!mod || pmnf_fit_reps(mod, &d, &r, &m, err, sizeof err) != 0) {
        check(0, "fit: %s", err);
        return check_summary();
    }
    const double *k = m.widen;
    printf("# constant %g, selection %g, widen %g %g %g\n", m.f.constant, m.selection, k[0], k[1],
           k[2]);
    check(m.f.nterms == 0 && m.f.constant == 100, "a constant of 100");
    check(k[0] >= 1 && k[0] <= k[1] && k[1] <= k[2] && k[2] == m.selection,
          "a profile rising to selection: %g %g %g, %g", k[0], k[1], k[2], m.selection);
    check(k[2] > 100 * k[0], "the spread at 8x is far beyond that at 2x: %g, %g", k[2], k[0]);

    share_is(&m, 64, k[0] / k[2], "2x");
    share_is(&m, 32 * pow(2, 1.5), 0.5 * (k[0] + k[1]) / k[2], "2^1.5 x");
    share_is(&m, 128, k[1] / k[2], "4x");
    share_is(&m, 256, 1, "8x");
    share_is(&m, 512, 1, "16x");
    share_is(&m, 8, k[0] / k[2], "inside the data");
    share_is(&m, 1, 1, "below the smallest coordinate");

    double h64 = half_width(&m, 64), h128 = half_width(&m, 128), h256 = half_width(&m, 256);
    printf("# half-widths at 64, 128, 256: %g %g %g\n", h64, h128, h256);
    check(h64 < h128 && h128 < h256, "the half-width grows with the distance: %g %g %g", h64, h128,
          h256);
    check(h64 <= 1, "within 1%% at 2x: +-%g", h64);

    /* the JSON form keeps the profile; without it, one widening everywhere */
    const char *names[1] = {"x"};
    json_t *doc = api_model_to_json(&m, names, 1);
    pmnf_model back;
    memset(&back, 0, sizeof back);
    check(doc && api_model_from_json(doc, names, 1, &back) == 0, "JSON round trip");
    check(!memcmp(back.widen, m.widen, sizeof m.widen), "the profile survives: %g %g %g",
          back.widen[0], back.widen[1], back.widen[2]);
    check(half_width(&back, 64) == h64, "the same interval at 2x after the round trip");
    json_object_del(json_object_get(doc, "interval"), "widening");
    memset(&back, 0, sizeof back);
    check(api_model_from_json(doc, names, 1, &back) == 0 && back.widen[2] == 0,
          "a document without the profile reads");
    check(check_close(half_width(&back, 64), h256, 1e-12, 0),
          "without the profile the 8x widening holds at 2x: %g vs %g", half_width(&back, 64),
          h256);
    json_array_set_new(json_object_get(json_object_get(doc, "interval"), "cov"), 0,
                       json_real(m.cov[0]));
    json_object_set_new(json_object_get(doc, "interval"), "widening",
                        json_pack("[f, f, f]", 0.5, 2.0, 3.0));
    memset(&back, 0, sizeof back);
    check(api_model_from_json(doc, names, 1, &back) == 0 && back.widen[2] == 0,
          "a profile with a value below 1 is not read");
    json_decref(doc);

    for (int i = 0; i < 5; i++) {
        y[i] = 10 * x[i];
        reps[3 * i] = y[i] * 0.99;
        reps[3 * i + 1] = y[i];
        reps[3 * i + 2] = y[i] * 1.01;
    }
    pmnf_model g;
    if (pmnf_fit_reps(mod, &d, &r, &g, err, sizeof err) != 0) {
        check(0, "fit: %s", err);
    } else {
        check(g.f.nterms > 0 && g.widen[0] < g.widen[2],
              "a growing model with a rising profile (%d terms)", g.f.nterms);
        printf("# growing: %s, widen %g %g %g\n", "10 x", g.widen[0], g.widen[1], g.widen[2]);
        share_is(&g, 64, 1, "a growing model at 2x");
        share_is(&g, 128, 1, "a growing model at 4x");
    }
    pmnf_modeler_free(mod);
    return check_summary();
}
