/*
 * fuzz_sweep_def.c — libFuzzer target for sweep definitions and legality
 * rules (sweep/sweep_plan.h, sweep/sweep_legal.h), the untrusted bodies of
 * POST /v1/experiments/{id}/sweep/plan. An input that is JSON goes to
 * sweep_def_parse; a success must give a consistent definition (values and
 * levels present, at most SWEEP_MAX_POINTS points), and its first points are
 * enumerated, judged legal or not and rendered; a failure must leave a
 * terminated field and message. Any other input is compiled as a legality
 * rule over three names and evaluated. Any breach aborts.
 * Seeds: tests/fuzz/corpus/sweep_def/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_legal.h"
#include "sweep/sweep_plan.h"

static void definition(const json_t *doc)
{
    sweep_def d;
    char field[200], err[400];
    if (sweep_def_parse(doc, &d, field, sizeof field, err, sizeof err) < 0) {
        if (!memchr(field, 0, sizeof field) || !memchr(err, 0, sizeof err) || !err[0])
            abort();
        return;
    }
    if (d.nvars < 1 || d.product < 1 || d.product > SWEEP_MAX_POINTS || d.repetitions < 1 ||
        !d.command)
        abort();
    for (int i = 0; i < d.nvars; i++)
        if (d.vars[i].nvalues < 1 || (i < d.nparams ? !d.vars[i].values : !d.vars[i].levels))
            abort();
    int idx[SWEEP_MAX_VARS], k = 0;
    char cmd[512];
    sweep_def_first(&d, idx);
    do {
        (void)sweep_def_legal(&d, idx);
        int n = sweep_def_command(&d, idx, 1, cmd, sizeof cmd);
        if (n >= 0 && (size_t)n != strlen(cmd))
            abort();
    } while (++k < 64 && sweep_def_next(&d, idx));
    sweep_def_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (doc) {
        definition(doc);
        json_decref(doc);
        return 0;
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *names[3] = {"ranks", "batch_size", "nodes"};
    sweep_legal l;
    char err[300];
    if (sweep_legal_compile(text, names, 3, &l, err, sizeof err) == 0) {
        double v[3] = {8, 64, 2};
        (void)sweep_legal_eval(&l, v);
        sweep_legal_free(&l);
    } else if (strncmp(err, "offset ", 7)) {
        abort();
    }
    free(text);
    return 0;
}
