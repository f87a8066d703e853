/*
 * fuzz_training.c — libFuzzer target for the parsers of experiment options
 * that come from requests: the training set-up as expressions
 * (api/training.h, a JSON object) and the validation-step / iteration-phase
 * name patterns (ingest/phase.h). The input is "PATTERNS\nJSON": the
 * patterns are compiled and matched against the input itself; the JSON, if
 * it parses to an object, is compiled as a training set-up against two
 * parameters and evaluated at a few points. A success must give finite
 * step counts >= 1, a failure a named field and a terminated message. Any
 * breach aborts. Seeds: tests/fuzz/corpus/training/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/training.h"
#include "ingest/phase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = strchr(text, '\n');
    const char *json = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    ingest_phase_patterns p;
    ingest_phase_compile(text, &p);
    if (p.n < 0 || p.n > INGEST_PHASE_MAX_PATTERNS)
        abort();
    for (int i = 0; i < p.n; i++)
        if (p.len[i] == 0 || p.len[i] > 63 || strlen(p.pat[i]) != p.len[i])
            abort();
    (void)ingest_phase_match(&p, (const char *)data, size);
    (void)ingest_phase_check(text);

    json_t *doc = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
    if (json_is_object(doc)) {
        static const char *const names[] = {"x1", "x2"};
        training_setup s;
        char field[64], msg[400];
        if (training_compile(doc, names, 2, &s, field, sizeof field, msg, sizeof msg) == 0) {
            static const double pts[][2] = {{1, 1}, {2, 32}, {64, 512}, {1e6, 3}};
            for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
                double n_t = -1, n_v = -1;
                int rc = training_steps_at(&s, pts[i], names, 2, &n_t, &n_v, field, sizeof field,
                                           msg, sizeof msg);
                if (rc == 0 && (!(n_t >= 1) || !(n_v >= 0) || !isfinite(n_t) || !isfinite(n_v)))
                    abort();
                if (rc != 0 && (strncmp(field, "training.", 9) || !memchr(msg, 0, sizeof msg)))
                    abort();
            }
        } else if (strncmp(field, "training.", 9) || !memchr(msg, 0, sizeof msg)) {
            abort();
        }
    }
    json_decref(doc);
    free(text);
    return 0;
}
