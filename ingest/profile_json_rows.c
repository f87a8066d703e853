/*
 * profile_json_rows.c — the perfcast-JSON profile reader's last step
 * (profile_json.c): once the document was walked, ranks are checked for
 * duplicates, callpath and metric names interned by sorting, and the raw
 * metric values summed into the sorted rows of a normalized profile
 * (profile.h); also the names of a profile's categories and phases and
 * profile_free. State in profile_json_internal.h.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <yajl/yajl_parse.h>

#include "common/numtext.h"
#include "common/grow.h"
#include "common/utf8.h"
#include "ingest/profile.h"
#include "ingest/profile_json_internal.h"

/* ---- names of a profile's categories and phases; freeing one ----------- */

static const char *const category_names[] = {"comp", "comm", "mem", "host"};
static const char *const phase_names[] = {"train", "validation", "between"};

const char *profile_category_name(int category)
{
    if (category < 0 || category > PROFILE_HOST)
        return NULL;
    return category_names[category];
}

int profile_category_from_name(const char *name)
{
    for (int i = 0; i <= PROFILE_HOST; i++)
        if (strcmp(name, category_names[i]) == 0)
            return i;
    return -1;
}

const char *profile_phase_name(int phase)
{
    if (phase < 0 || phase > PROFILE_BETWEEN)
        return NULL;
    return phase_names[phase];
}

void profile_free(profile *p)
{
    for (int i = 0; i < p->nparams; i++)
        free(p->param_names[i]);
    free(p->param_names);
    free(p->point);
    for (int i = 0; i < p->nlevels; i++) {
        free(p->level_names[i]);
        free(p->level_values[i]);
    }
    free(p->level_names);
    free(p->level_values);
    for (int i = 0; i < p->ncallpaths; i++)
        free(p->callpaths[i].name);
    free(p->callpaths);
    for (int i = 0; i < p->nmetrics; i++)
        free(p->metrics[i]);
    free(p->metrics);
    free(p->rows);
    memset(p, 0, sizeof(*p));
}

/* ---- ranks ----------------------------------------------------------------- */

static int cmp_rank(const void *a, const void *b)
{
    const pj_rank *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int pj_check_unique_ranks(pj_reader *r, pj_rank *ranks, size_t n)
{
    qsort(ranks, n, sizeof(*ranks), cmp_rank);
    for (size_t i = 1; i < n; i++)
        if (ranks[i].rank == ranks[i - 1].rank) {
            size_t first = ranks[i - 1].index, later = ranks[i].index;
            return pj_fail(r, "ranks[%zu].rank: rank %d appears twice (also ranks[%zu])",
                           later, ranks[i].rank, first);
        }
    return 0;
}

/* ---- interning ------------------------------------------------------------- */

typedef struct pj_key {
    const char *name;
    size_t index;
} pj_key;

static int cmp_key(const void *a, const void *b)
{
    const pj_key *x = a, *y = b;
    int c = x->name == y->name ? 0 : strcmp(x->name, y->name); /* names kept once are alike */
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Numbers n names in order of first appearance: ids[i] for name i; first[k]
 * the first occurrence of id k. Sorts instead of hashing: O(n log n) whatever
 * the names. Returns the number of distinct names, or -1 (out of memory). */
static long intern(pj_key *keys, size_t n, int *ids, size_t *first)
{
    size_t *rep = malloc((n ? n : 1) * sizeof(*rep));
    if (!rep)
        return -1;
    qsort(keys, n, sizeof(*keys), cmp_key);
    for (size_t i = 0; i < n; i++) {
        size_t head = (i > 0 && (keys[i].name == keys[i - 1].name ||
                                 strcmp(keys[i].name, keys[i - 1].name) == 0))
                          ? rep[keys[i - 1].index] : keys[i].index;
        rep[keys[i].index] = head;
    }
    long next = 0;
    for (size_t i = 0; i < n; i++) {
        if (rep[i] == i) {
            first[next] = i;
            ids[i] = (int)next++;
        } else {
            ids[i] = ids[rep[i]];
        }
    }
    free(rep);
    return next;
}

/* Callpath ids into r->raw, names and categories into out. A callpath given
 * two categories is refused at its second one. */
int pj_intern_callpaths(pj_reader *r, profile *out)
{
    size_t n = r->nocc;
    pj_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    size_t *first = malloc((n ? n : 1) * sizeof(*first));
    int rc = -1;
    if (!keys || !ids || !first) {
        pj_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (pj_key){r->text + r->occ[i].name, i};
    long nd = intern(keys, n, ids, first);
    if (nd < 0 || nd > INT_MAX) {
        nd < 0 ? pj_nomem(r) : pj_fail(r, "too many callpaths");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const pj_occ *o = &r->occ[i], *f = &r->occ[first[ids[i]]];
        if (o->category != f->category) {
            char path[PJ_PATH];
            pj_occ_path(path, sizeof(path), o);
            const char *name = r->text + o->name;
            pj_fail(r, "%s.category: \"%s\" but callpath \"%.*s\" is \"%s\" earlier", path,
                    category_names[o->category], pj_shown(name), name,
                    category_names[f->category]);
            goto done;
        }
    }
    out->callpaths = calloc(nd ? (size_t)nd : 1, sizeof(*out->callpaths));
    if (!out->callpaths) {
        pj_nomem(r);
        goto done;
    }
    for (long k = 0; k < nd; k++) {
        const pj_occ *f = &r->occ[first[k]];
        out->callpaths[k].category = f->category;
        if (!(out->callpaths[k].name = strdup(r->text + f->name))) {
            pj_nomem(r);
            goto done;
        }
        out->ncallpaths = (int)k + 1;
    }
    for (size_t i = 0; i < r->nraw; i++)
        r->raw[i].callpath = ids[r->raw[i].occ];
    rc = 0;
done:
    free(keys);
    free(ids);
    free(first);
    return rc;
}

/* Metric ids into r->raw, names into out: the names kept (a few) are
 * interned, each row takes its name's id. */
int pj_intern_metrics(pj_reader *r, profile *out)
{
    size_t n = r->nmnames;
    pj_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    size_t *first = malloc((n ? n : 1) * sizeof(*first));
    int rc = -1;
    if (!keys || !ids || !first) {
        pj_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (pj_key){r->text + r->mnames[i], i};
    long nd = intern(keys, n, ids, first);
    if (nd < 0 || nd > INT_MAX) {
        nd < 0 ? pj_nomem(r) : pj_fail(r, "too many metrics");
        goto done;
    }
    out->metrics = calloc(nd ? (size_t)nd : 1, sizeof(*out->metrics));
    if (!out->metrics) {
        pj_nomem(r);
        goto done;
    }
    for (long k = 0; k < nd; k++) {
        if (!(out->metrics[k] = strdup(r->text + r->mnames[first[k]]))) {
            pj_nomem(r);
            goto done;
        }
        out->nmetrics = (int)k + 1;
    }
    for (size_t i = 0; i < r->nraw; i++)
        r->raw[i].metric = ids[r->raw[i].metric_name];
    rc = 0;
done:
    free(keys);
    free(ids);
    free(first);
    return rc;
}

/* ---- rows ------------------------------------------------------------------ */

static int cmp_raw(const void *a, const void *b)
{
    const pj_raw *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->callpath != y->callpath)
        return x->callpath < y->callpath ? -1 : 1;
    if (x->metric != y->metric)
        return x->metric < y->metric ? -1 : 1;
    return x->occ < y->occ ? -1 : x->occ > y->occ;
}

static int same_cell(const pj_raw *x, const pj_raw *y)
{
    return x->rank == y->rank && x->phase == y->phase && x->step == y->step &&
           x->callpath == y->callpath && x->metric == y->metric;
}

/* Sorts the raw rows and sums the ones of one (rank, phase, step, callpath,
 * metric) cell: a callpath listed twice in a step. The rows are written over
 * the raw rows they come from, so no second array of rows is needed: a row is
 * smaller than a raw row, and row n is written only after raw row n (n <= i)
 * has been copied out; the block then passes to out. */
_Static_assert(sizeof(profile_row) <= sizeof(pj_raw), "rows are written over raw rows");
int pj_build_rows(pj_reader *r, profile *out)
{
    if (r->nraw == 0)
        return pj_fail(r, "ranks: no callpath has a metric in any step");
    qsort(r->raw, r->nraw, sizeof(*r->raw), cmp_raw);
    profile_row *rows = (profile_row *)(void *)r->raw;
    pj_raw prev = {0};
    size_t n = 0;
    for (size_t i = 0; i < r->nraw; i++) {
        pj_raw x = r->raw[i];
        if (n > 0 && same_cell(&x, &prev)) {
            rows[n - 1].value += x.value;
            if (!isfinite(rows[n - 1].value)) {
                char path[PJ_PATH], mpath[PJ_PATH + 64];
                pj_occ_path(path, sizeof(path), &r->occ[x.occ]);
                pj_metric_path(mpath, sizeof(mpath), path, r->text + r->mnames[x.metric_name]);
                return pj_fail(r, "%s: the sum over the step overflows", mpath);
            }
            continue;
        }
        rows[n++] = (profile_row){.rank = x.rank, .phase = x.phase, .step = x.step,
                                  .callpath = x.callpath, .metric = x.metric, .value = x.value};
        prev = x;
    }
    profile_row *fit = realloc(rows, n * sizeof(*rows));
    out->rows = fit ? fit : rows;
    out->nrows = n;
    r->raw = NULL;
    r->nraw = r->raw_cap = 0;
    return 0;
}
