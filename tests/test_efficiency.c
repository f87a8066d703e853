/*
 * test_efficiency.c — the scaling efficiency of a measured series per group
 * (analysis/efficiency.h) without a server or a database: the groups, the
 * baseline, SE_N = t_baseline / t_N and the levels of each group.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analysis/efficiency.h"
#include "tests/check.h"

static const char params[2][64] = {"ranks", "threads"};
static const char factors[1][65] = {"dataloader"};

static double pts[5][2] = {{4, 1}, {2, 2}, {2, 1}, {8, 1}, {4, 2}};
static double reps[5][2] = {{5, 5.2}, {6, 6.2}, {10, 10.4}, {3, 3}, {3.2, 3.4}};

static void rows_of(store_measurement_row *rows, const char *const *levels)
{
    for (int i = 0; i < 5; i++)
        rows[i] = (store_measurement_row){.point = pts[i], .nparams = 2, .reps = reps[i],
                                          .nreps = 2,
                                          .levels = (char *)(levels ? levels[i] : "[]")};
}

static json_t *group_at(json_t *groups, double threads)
{
    for (size_t i = 0; i < json_array_size(groups); i++) {
        json_t *g = json_array_get(groups, i);
        if (json_number_value(json_object_get(json_object_get(g, "fixed"), "threads")) == threads)
            return g;
    }
    return NULL;
}

int main(void)
{
    store_measurement_row rows[5];
    rows_of(rows, NULL);
    noisy_names nm = {params, 2, factors, 0};
    int found;
    json_t *groups = eff_groups(&nm, rows, 5, 0, NULL, &found);
    check(groups && json_array_size(groups) == 2 && found, "two groups (threads 1 and 2)");
    json_t *g1 = group_at(groups, 1), *g2 = group_at(groups, 2);
    json_t *p1 = json_object_get(g1, "points");
    check(json_number_value(json_object_get(g1, "baseline")) == 2 && json_array_size(p1) == 3,
          "threads 1: baseline ranks 2, three runs");
    /* along ranks, ascending: 2, 4, 8; SE at 8 = 10.2 / 3 */
    json_t *last = json_array_get(p1, 2);
    double se = json_number_value(json_object_get(json_object_get(last, "se"), "value"));
    check(json_number_value(json_object_get(last, "ranks")) == 8 &&
              check_close(se, 10.2 / 3, 1e-12, 0),
          "SE_8 = 10.2 / 3: %g", se);
    /* ranks 8 has no spread: the interval is the baseline's alone, around the value */
    json_t *iv8 = json_object_get(json_object_get(last, "se"), "interval");
    check(json_array_size(iv8) == 2 && json_number_value(json_array_get(iv8, 0)) < se &&
              se < json_number_value(json_array_get(iv8, 1)),
          "SE_8's interval holds its value");
    json_t *mid = json_object_get(json_array_get(p1, 1), "se");
    json_t *iv = json_object_get(mid, "interval");
    double v = json_number_value(json_object_get(mid, "value"));
    check(json_array_size(iv) == 2 && json_number_value(json_array_get(iv, 0)) < v &&
              v < json_number_value(json_array_get(iv, 1)),
          "SE_4's interval holds its value");
    check(json_number_value(json_object_get(g2, "baseline")) == 2 &&
              check_close(json_number_value(json_object_get(
                              json_object_get(json_array_get(json_object_get(g2, "points"), 1),
                                              "se"),
                              "value")),
                          6.1 / 3.3, 1e-12, 0),
          "threads 2: SE_4 = 6.1 / 3.3");
    json_decref(groups);

    /* a baseline only one group measured: the other names why it has none */
    rows_of(rows, NULL);
    double eight = 8;
    groups = eff_groups(&nm, rows, 5, 0, &eight, &found);
    g2 = group_at(groups, 2);
    check(found && json_is_null(json_object_get(g2, "baseline")) &&
              json_is_string(json_object_get(g2, "reason")) &&
              json_is_null(json_object_get(json_array_get(json_object_get(g2, "points"), 0), "se")),
          "a group without its baseline: null, with a reason");
    json_decref(groups);
    double three = 3;
    rows_of(rows, NULL);
    groups = eff_groups(&nm, rows, 5, 0, &three, &found);
    check(groups && !found, "a baseline nobody measured: none found");
    json_decref(groups);

    /* with factors: each level combination is its own group, named */
    const char *lv[5] = {"[\"cpu\"]", "[\"cpu\"]", "[\"cpu\"]", "[\"dali\"]", "[\"cpu\"]"};
    rows_of(rows, lv);
    nm.nfactors = 1;
    groups = eff_groups(&nm, rows, 5, 0, NULL, &found);
    int dali = 0;
    for (size_t i = 0; i < json_array_size(groups); i++)
        dali += !strcmp(json_string_value(json_object_get(
                            json_object_get(json_array_get(groups, i), "levels"), "dataloader")) ?: "",
                        "dali");
    check(json_array_size(groups) == 3 && dali == 1, "three groups, one at dataloader=dali");
    json_decref(groups);
    return check_summary();
}
