/*
 * model_compare.h — compares two models printed in Extra-P's syntax: the same
 * terms (exponents exactly) and coefficients to 1e-6 relative. Shared by the
 * parity tests (test_parity.c, test_cube.c).
 */
#ifndef PERFCAST_TESTS_MODEL_COMPARE_H
#define PERFCAST_TESTS_MODEL_COMPARE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "modeling/pmnf.h"

/* Parameter names: every identifier that appears as "name^(" or "log2(name)". */
static int collect_names(const char *s, char names[][32], int max)
{
    int n = 0;
    for (const char *p = s; *p && n < max; p++) {
        const char *start = NULL, *end = NULL;
        if (!strncmp(p, "log2(", 5)) {
            start = p + 5;
            end = strchr(start, ')');
        } else if (p[0] == '^' && p[1] == '(') {
            end = p;
            start = p;
            while (start > s && start[-1] != ' ' && start[-1] != '*' && start[-1] != ')')
                start--;
            if (start > s && start[-1] == ')')
                continue; /* log2(x)^( */
        }
        if (!start || !end || end <= start || end - start >= 32)
            continue;
        char name[32];
        memcpy(name, start, (size_t)(end - start));
        name[end - start] = '\0';
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= !strcmp(names[i], name);
        if (!seen)
            strcpy(names[n++], name);
    }
    return n;
}

static int same_term_shape(const pmnf_term *a, const pmnf_term *b)
{
    if (a->nfactors != b->nfactors)
        return 0;
    for (int i = 0; i < a->nfactors; i++)
        if (a->factors[i].param != b->factors[i].param ||
            fabs(a->factors[i].poly - b->factors[i].poly) > 1e-12 ||
            a->factors[i].log != b->factors[i].log)
            return 0;
    return 1;
}

static int coef_equal(double got, double want)
{
    return fabs(got - want) <= 1e-6 * fabs(want) + 1e-12;
}

/* Compares two model strings; on mismatch explains in why. */
static int same_model(const char *got, const char *want, char *why, size_t cap)
{
    char names[16][32];
    char joined[1024];
    snprintf(joined, sizeof joined, "%s + %s", got, want);
    int n = collect_names(joined, names, 16);
    const char *ptrs[16];
    for (int i = 0; i < n; i++)
        ptrs[i] = names[i];
    pmnf_function g, w;
    char err[128];
    if (pmnf_parse(got, ptrs, n, &g, err, sizeof err) < 0 ||
        pmnf_parse(want, ptrs, n, &w, err, sizeof err) < 0) {
        snprintf(why, cap, "unparsable: %s", err);
        return 0;
    }
    if (g.nterms != w.nterms) {
        snprintf(why, cap, "%d terms, want %d", g.nterms, w.nterms);
        return 0;
    }
    if (!coef_equal(g.constant, w.constant)) {
        snprintf(why, cap, "constant %.17g, want %.17g", g.constant, w.constant);
        return 0;
    }
    for (int t = 0; t < w.nterms; t++) {
        int found = 0;
        for (int u = 0; u < g.nterms && !found; u++)
            if (same_term_shape(&g.terms[u], &w.terms[t]))
                found = 1 + u;
        if (!found) {
            snprintf(why, cap, "term %d of the expected model missing", t + 1);
            return 0;
        }
        if (!coef_equal(g.terms[found - 1].coef, w.terms[t].coef)) {
            snprintf(why, cap, "term %d coefficient %.17g, want %.17g", t + 1,
                     g.terms[found - 1].coef, w.terms[t].coef);
            return 0;
        }
    }
    return 1;
}

#endif
