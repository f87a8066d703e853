/*
 * fuzz_requests.c — libFuzzer target for the request documents the
 * analyses parse (analysis/): an experiment's creation document
 * (analysis/experiment_doc.h), POST /v1/fit's input, perfcast's document or
 * an Extra-P file (analysis/fit_request.h), and the per-iteration analyses'
 * requests (analysis/iteration_request.h). The input goes to each as bytes
 * and, when it parses to an object, as a document. A refusal must name a
 * 4xx or 500 status and carry a terminated message; a success a document.
 * Any breach aborts. Seeds: tests/fuzz/corpus/requests/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/experiment_doc.h"
#include "analysis/fit_request.h"
#include "analysis/iteration_request.h"

static void check_problem(int rc, const an_problem *p)
{
    if (rc < 0 && ((p->status < 400 || p->status > 500) ||
                   !memchr(p->msg, '\0', sizeof p->msg) || !memchr(p->field, '\0', sizeof p->field)))
        abort();
}

static void iteration_requests(const json_t *doc)
{
    an_problem p;
    iteration_opts o = {0};
    xg_kt_entry *kt = NULL;
    check_problem(iteration_request_trace(doc, &o, &kt, &p), &p);
    free(kt);
    int method;
    double at, x;
    size_t n;
    int64_t id;
    int rc = iteration_request_model(doc, &o, &method, &at, &n, &p);
    check_problem(rc, &p);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double m;
        int erc = iteration_request_model_entry(doc, i, &id, &x, &m, &p);
        check_problem(erc, &p);
        if (erc == 0 && !isnan(m) && !(m > 0 && isfinite(m)))
            abort(); /* a measured step is seconds > 0, or none */
    }
    const char *name;
    check_problem(iteration_request_set(doc, &name, &o.prof, &p), &p);
    int ntraces;
    json_t *set = json_object_get(doc, "set");
    if (set) {
        json_t *s = iteration_request_given_set(set, &ntraces, &p);
        if (!s)
            check_problem(-1, &p);
        json_decref(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    an_problem p;
    ingest_format fmt;
    int is_perfcast;
    check_problem(fit_request_format(NULL, body, size, &fmt, &is_perfcast, &p), &p);
    pmnf_options o;
    pmnf_options_default(&o);
    json_t *doc = json_loadb(body, size, 0, NULL);
    if (!is_perfcast && size < 4096) {
        json_t *out = fit_request_extrap(body, size, fmt, &o, &p);
        if (!out)
            check_problem(-1, &p);
        json_decref(out);
    }
    if (json_is_object(doc)) {
        experiment_doc e = {0};
        check_problem(experiment_doc_validate(doc, &e, &p), &p);
        experiment_doc_free(&e);
        /* fits are slow on many points: perfcast's document only when small */
        if (json_array_size(json_object_get(doc, "points")) <= 16) {
            json_t *out = fit_request_perfcast(doc, &o, &p);
            if (!out)
                check_problem(-1, &p);
            json_decref(out);
        }
        iteration_requests(doc);
    }
    json_decref(doc);
    return 0;
}
