/*
 * cube_set.c — a directory of Cube runs into Extra-P's experiment, and one
 * run into perfcast's normalized profile.
 *
 * Run directories carry the parameters in their names, read the way Extra-P
 * 4.2.5's AbstractDirectoryReader does: the text between the first '.' and
 * the first ".r" (the whole name when there is no '.', up to the end when
 * there is no ".r") alternates names and numbers made of digits, '.' and ','
 * ("x10y1z1", "x1.1y1.1z1.1", "x20,5.y20,5.z1,5", "x21.5,y21,5,z1.15"); ','
 * is a decimal point and a trailing '.' a separator. Every run must name the
 * same parameters in the same order; parameters with one value only are
 * dropped, and at least one must remain. Runs are ordered by their values
 * (Extra-P sorts them), runs with equal values are repetitions, and each
 * point holds, for every (callpath, metric), the values of all locations of
 * all its runs (Extra-P's default weak-scaling aggregation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/cube_internal.h"
#include "ingest/extrap_internal.h"

#define MAX_PARAMS CUBE_MAX_PARAMS

typedef struct cube_run {
    char *dir;
    char *store;
    int np;
    char *names[MAX_PARAMS];
    double values[MAX_PARAMS];
    int order; /* position of arrival, for a stable sort */
    cube_profile prof;
} cube_run;

struct cube_set {
    cube_run *runs;
    int n;
    size_t cap;
    char *skipped; /* "a, b" */
    size_t skipped_len;
};

int ingest_cube_dir_params(const char *dirname, char **store, char **names, double *values,
                           int cap, char *msg, size_t msgcap)
{
    *store = NULL;
    const char *dot = strchr(dirname, '.');
    const char *start = dot ? dot + 1 : dirname;
    const char *end = strstr(dirname, ".r");
    if (!end)
        end = dirname + strlen(dirname);
    if (end < start)
        end = start;
    size_t len = (size_t)(end - start);
    char *s = malloc(len + 1);
    if (!s) {
        snprintf(msg, msgcap, "out of memory");
        return -1;
    }
    memcpy(s, start, len);
    s[len] = '\0';
    int n = 0;
    char *p = s;
    const char *numchars = "0123456789.,";
    if (!*p || !strpbrk(p, "0123456789.,")) {
        snprintf(msg, msgcap, "no parameter in the name \"%.80s\" (expected e.g. "
                 "\"mm.x10y1z1.r1\")", dirname);
        free(s);
        return -1;
    }
    while (*p) {
        size_t tl = strcspn(p, numchars);
        size_t nl = strspn(p + tl, numchars);
        if (tl == 0 || nl == 0 || n >= cap) {
            snprintf(msg, msgcap, "\"%.80s\": %s", dirname,
                     n >= cap   ? "too many parameters"
                     : tl == 0  ? "a number without a parameter name before it"
                                : "a parameter name without a number after it");
            free(s);
            return -1;
        }
        char num[64];
        if (nl >= sizeof num) {
            snprintf(msg, msgcap, "\"%.80s\": a number longer than 63 characters", dirname);
            free(s);
            return -1;
        }
        memcpy(num, p + tl, nl);
        num[nl] = '\0';
        for (char *c = num; *c; c++)
            if (*c == ',')
                *c = '.';
        size_t k = nl;
        while (k > 0 && num[k - 1] == '.')
            num[--k] = '\0';
        char *e = NULL;
        double v = k ? strtod(num, &e) : 0;
        if (!k || *e) {
            snprintf(msg, msgcap, "\"%.80s\": \"%.40s\" is not a number", dirname, num);
            free(s);
            return -1;
        }
        names[n] = p;
        values[n] = v;
        n++;
        char *next = p + tl + nl;
        p[tl] = '\0'; /* the name ends where its number starts */
        p = next;
    }
    *store = s;
    return n;
}

cube_set *ingest_cube_set_new(void)
{
    return calloc(1, sizeof(cube_set));
}

void ingest_cube_set_free(cube_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        free(s->runs[i].dir);
        free(s->runs[i].store);
        cube_profile_free(&s->runs[i].prof);
    }
    free(s->runs);
    free(s->skipped);
    free(s);
}

static void set_msg(ingest_error *err, const char *fmt, const char *a, const char *b)
{
    memset(err, 0, sizeof *err);
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, fmt, a, b);
}

static int note_skipped(cube_set *s, const char *name)
{
    size_t nl = strlen(name);
    /* already listed? */
    for (const char *p = s->skipped; p && *p;) {
        const char *e = strstr(p, ", ");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == nl && !memcmp(p, name, nl))
            return 0;
        p = e ? e + 2 : p + l;
    }
    char *t = realloc(s->skipped, s->skipped_len + nl + 3);
    if (!t)
        return -1;
    s->skipped = t;
    if (s->skipped_len) {
        memcpy(t + s->skipped_len, ", ", 2);
        s->skipped_len += 2;
    }
    memcpy(t + s->skipped_len, name, nl + 1);
    s->skipped_len += nl;
    return 0;
}

int ingest_cube_set_add(cube_set *s, const char *dirname, cube_profile *p, ingest_error *err)
{
    if ((size_t)s->n >= s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        cube_run *r = realloc(s->runs, nc * sizeof *r);
        if (!r) {
            set_msg(err, "out of memory%s%s", "", "");
            return -1;
        }
        s->runs = r;
        s->cap = nc;
    }
    cube_run *r = &s->runs[s->n];
    memset(r, 0, sizeof *r);
    char msg[200];
    r->np = ingest_cube_dir_params(dirname, &r->store, r->names, r->values, MAX_PARAMS, msg,
                                   sizeof msg);
    if (r->np < 0) {
        set_msg(err, "%s%s", msg, "");
        return -1;
    }
    r->dir = strdup(dirname);
    if (!r->dir) {
        free(r->store);
        set_msg(err, "out of memory%s%s", "", "");
        return -1;
    }
    const cube_run *first = s->n ? &s->runs[0] : NULL;
    int same = !first || first->np == r->np;
    for (int i = 0; same && first && i < r->np; i++)
        same = !strcmp(first->names[i], r->names[i]);
    if (!same) {
        char a[120] = "", b[120] = "";
        for (int i = 0; i < first->np; i++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%s%s", i ? "," : "", first->names[i]);
        for (int i = 0; i < r->np; i++)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s", i ? "," : "", r->names[i]);
        snprintf(err->msg, sizeof err->msg,
                 "\"%.50s\" names (%.30s), but \"%.50s\" names (%.30s): every run must name the "
                 "same parameters in the same order",
                 dirname, b, first->dir, a);
        err->offset = -1;
        free(r->dir);
        free(r->store);
        return -1;
    }
    for (int i = 0; i < p->nskipped; i++)
        if (note_skipped(s, p->skipped[i]) < 0) {
            free(r->dir);
            free(r->store);
            set_msg(err, "out of memory%s%s", "", "");
            return -1;
        }
    r->order = s->n;
    r->prof = *p;
    memset(p, 0, sizeof *p);
    s->n++;
    return 0;
}

const char *ingest_cube_set_skipped(const cube_set *s)
{
    return s->skipped ? s->skipped : "";
}

static int run_cmp(const void *x, const void *y, void *ctx)
{
    const cube_run *a = x, *b = y;
    const int *keep = ctx;
    for (int i = 0; i < a->np; i++) {
        if (!keep[i])
            continue;
        if (a->values[i] != b->values[i])
            return a->values[i] < b->values[i] ? -1 : 1;
    }
    return (a->order > b->order) - (a->order < b->order);
}

static int add_run(ingest_builder *b, const cube_run *r, int coord, int *cp_map, int *m_map)
{
    const cube_profile *p = &r->prof;
    for (int i = 0; i < p->ncallpaths; i++)
        if ((cp_map[i] = ingest_builder_callpath(b, p->callpaths[i], strlen(p->callpaths[i]))) < 0)
            return -1;
    for (int i = 0; i < p->nmetrics; i++)
        if ((m_map[i] = ingest_builder_metric(b, p->metrics[i], strlen(p->metrics[i]))) < 0)
            return -1;
    for (int i = 0; i < p->nseries; i++) {
        const cube_series *s = &p->series[i];
        int sid = ingest_builder_series(b, cp_map[s->callpath], m_map[s->metric]);
        int added;
        int pt = sid < 0 ? -1 : ingest_builder_point(b, sid, coord, &added);
        if (pt < 0)
            return -1;
        for (int l = 0; l < p->nlocations; l++)
            if (ingest_builder_value(b, pt, s->values[l]) < 0)
                return -1;
    }
    return 0;
}

int ingest_cube_set_finish(cube_set *s, ingest_experiment *out, ingest_error *err)
{
    memset(out, 0, sizeof *out);
    if (s->n == 0) {
        set_msg(err, "no run: expected directories like \"mm.x10y1z1.r1/\" holding a .cubex "
                "file%s%s", "", "");
        return -1;
    }
    int np = s->runs[0].np, keep[MAX_PARAMS] = {0}, nkeep = 0;
    for (int i = 0; i < np; i++) {
        for (int j = 1; j < s->n && !keep[i]; j++)
            keep[i] = s->runs[j].values[i] != s->runs[0].values[i];
        nkeep += keep[i];
    }
    if (!nkeep) {
        set_msg(err, "no parameter varies between the runs' directory names (\"%.80s\", ...): "
                "name them like \"mm.x10y1z1.r1\"%s", s->runs[0].dir, "");
        return -1;
    }
    qsort_r(s->runs, (size_t)s->n, sizeof *s->runs, run_cmp, keep);
    ingest_builder b;
    if (ingest_builder_init(&b, err) < 0) {
        ingest_builder_free(&b);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < np && !rc; i++)
        if (keep[i] && ingest_builder_param(&b, s->runs[0].names[i],
                                            strlen(s->runs[0].names[i])) < 0)
            rc = -1;
    int maxcp = 1, maxm = 1;
    for (int i = 0; i < s->n; i++) {
        if (s->runs[i].prof.ncallpaths > maxcp)
            maxcp = s->runs[i].prof.ncallpaths;
        if (s->runs[i].prof.nmetrics > maxm)
            maxm = s->runs[i].prof.nmetrics;
    }
    int *cp_map = malloc(sizeof(int) * (size_t)maxcp), *m_map = malloc(sizeof(int) * (size_t)maxm);
    if (!cp_map || !m_map)
        rc = ingest_fail(&b, "out of memory");
    for (int i = 0; i < s->n && !rc; i++) {
        double v[MAX_PARAMS];
        int k = 0, coord, added;
        for (int j = 0; j < np; j++)
            if (keep[j])
                v[k++] = s->runs[i].values[j];
        rc = ingest_builder_coord(&b, v, &coord, &added);
        if (!rc)
            rc = add_run(&b, &s->runs[i], coord, cp_map, m_map);
        if (rc) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "%.80s: %.160s", s->runs[i].dir, m);
        }
    }
    free(cp_map);
    free(m_map);
    if (!rc)
        rc = ingest_builder_finish(&b, out);
    ingest_builder_free(&b);
    return rc;
}

/* ---- one run as a normalized profile ------------------------------------------ */

static int series_cmp(const void *x, const void *y, void *ctx)
{
    const cube_series *s = ctx;
    const cube_series *a = &s[*(const int *)x], *b = &s[*(const int *)y];
    if (a->callpath != b->callpath)
        return a->callpath < b->callpath ? -1 : 1;
    if (a->metric != b->metric)
        return a->metric < b->metric ? -1 : 1;
    return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

int ingest_cube_to_profile(const cube_profile *c, profile *out, ingest_error *err)
{
    memset(out, 0, sizeof *out);
    int *ord = malloc(sizeof(int) * (size_t)(c->nseries ? c->nseries : 1));
    out->callpaths = calloc((size_t)(c->ncallpaths ? c->ncallpaths : 1), sizeof *out->callpaths);
    out->metrics = calloc((size_t)(c->nmetrics ? c->nmetrics : 1), sizeof *out->metrics);
    out->rows = malloc(sizeof *out->rows * ((size_t)c->nseries * (size_t)c->nlocations + 1));
    int rc = ord && out->callpaths && out->metrics && out->rows ? 0 : -1;
    for (int i = 0; !rc && i < c->ncallpaths; i++) {
        out->callpaths[i].category = PROFILE_COMP;
        if (!(out->callpaths[i].name = strdup(c->callpaths[i])))
            rc = -1;
        out->ncallpaths = i + 1;
    }
    for (int i = 0; !rc && i < c->nmetrics; i++) {
        if (!(out->metrics[i] = strdup(c->metrics[i])))
            rc = -1;
        out->nmetrics = i + 1;
    }
    if (!rc) {
        for (int i = 0; i < c->nseries; i++)
            ord[i] = i;
        qsort_r(ord, (size_t)c->nseries, sizeof *ord, series_cmp, c->series);
        /* location after location, the call sites of one name summed */
        for (int l = 0; l < c->nlocations; l++)
            for (int i = 0; i < c->nseries; i++) {
                const cube_series *s = &c->series[ord[i]];
                profile_row *last = out->nrows ? &out->rows[out->nrows - 1] : NULL;
                if (last && last->rank == l && last->callpath == s->callpath &&
                    last->metric == s->metric) {
                    last->value += s->values[l];
                    continue;
                }
                out->rows[out->nrows++] =
                    (profile_row){l, PROFILE_TRAIN, 0, s->callpath, s->metric, s->values[l]};
            }
        out->nranks = c->nlocations;
        out->repetition = 1;
    }
    free(ord);
    if (rc) {
        profile_free(out);
        set_msg(err, "out of memory%s%s", "", "");
    }
    return rc;
}
