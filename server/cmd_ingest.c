/*
 * cmd_ingest.c — `perfcast ingest FILE`: what perfcast understands of a
 * profile, without a server. Reads a Kineto trace (plain or gzip), an Nsight
 * Systems SQLite export or a perfcast JSON profile (ingest/format.h picks
 * the reader from --format or the bytes) and prints the normalized profile:
 * per step the time, visits and bytes of each category, the gaps between
 * steps, and the callpaths with the most time. --json prints one document:
 *
 *   {"format","rank","steps":[{"phase","index","totals":{"comp":{"time",
 *    "visits","bytes"},"comm":{..},"mem":{..},"host":{..}}}],
 *    "between_steps":{"comp":{..},..},"callpaths":[{"name","category",
 *    "metrics":{"time","visits",["bytes"]}}]}
 *
 * totals are summed over the step's callpaths (time in seconds);
 * between_steps over every gap; a callpath's metrics over the whole trace.
 * A regular file is streamed (a Kineto trace of any size in bounded
 * memory); "-" reads stdin. Invalid input: exit 2 and one line on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/http.h"
#include "ingest/format.h"
#include "ingest/phase.h"
#include "ingest/trace.h"
#include "server/commands.h"

#define TOP_PER_CATEGORY 5

typedef struct ingest_args {
    const char *path;
    ingest_kind kind;
    int rank;
    const char *markers;
    const char *validation; /* --validation-markers */
    int phase;              /* --phase: INGEST_PHASE_* */
    int json;
} ingest_args;

static void ingest_usage_to(FILE *to)
{
    fprintf(to, "usage: perfcast ingest FILE|DIR [--format %s]\n"
                "                            [--rank N] [--markers LIST] [--json]\n"
                "                            [--validation-markers LIST] [--phase train|validation]\n"
                "Reads a profile or trace and prints its steps, categories and callpaths (one\n"
                "JSON document with --json). DIR: a Score-P Cube profile set (runs in\n"
                "subdirectories named after their parameters, e.g. mm.x10y1z1.r1/profile.cubex).\n",
            ingest_kind_names());
}

static int ingest_usage(const char *msg)
{
    fprintf(stderr, "perfcast ingest: %s\n", msg);
    ingest_usage_to(stderr);
    return 2;
}

static int parse_args(int argc, char **argv, ingest_args *a)
{
    memset(a, 0, sizeof *a);
    a->rank = -1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if ((!strcmp(s, "--format") || !strcmp(s, "--rank") || !strcmp(s, "--markers")) &&
            i + 1 >= argc) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s needs a value", s);
            return ingest_usage(msg);
        }
        if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--format") && i + 1 < argc) {
            a->kind = ingest_kind_from_name(argv[++i]);
            if (a->kind == INGEST_KIND_UNKNOWN) {
                char msg[160];
                snprintf(msg, sizeof msg, "--format must be one of %s", ingest_kind_names());
                return ingest_usage(msg);
            }
        } else if (!strcmp(s, "--rank") && i + 1 < argc) {
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || v < 0 || v > INT_MAX)
                return ingest_usage("--rank must be an integer >= 0");
            a->rank = (int)v;
        } else if (!strcmp(s, "--markers") && i + 1 < argc) {
            a->markers = argv[++i];
        } else if (!strcmp(s, "--validation-markers") && i + 1 < argc) {
            a->validation = argv[++i];
            if (ingest_phase_check(a->validation))
                return ingest_usage("--validation-markers must be comma-separated, non-empty "
                                    "name parts (1 to 256 bytes)");
        } else if (!strcmp(s, "--phase") && i + 1 < argc) {
            const char *ph = argv[++i];
            if (!strcmp(ph, "train"))
                a->phase = INGEST_PHASE_TRAIN;
            else if (!strcmp(ph, "validation"))
                a->phase = INGEST_PHASE_VALIDATION;
            else
                return ingest_usage("--phase must be train or validation");
        } else if (s[0] == '-' && s[1] != '\0') {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown flag %.100s", s);
            return ingest_usage(msg);
        } else if (!a->path) {
            a->path = s;
        } else {
            return ingest_usage("only one FILE");
        }
    }
    if (!a->path)
        return ingest_usage("FILE is missing");
    return 0;
}

/* ---- the summary ------------------------------------------------------------------ */

typedef struct cat_sum {
    double time, visits, bytes;
} cat_sum;

/* Per step (in row order), per category sums; the gaps together. */
typedef struct summary {
    int metric_time, metric_visits, metric_bytes;
    int nsteps;
    struct step_sum {
        int rank, phase, index;
        cat_sum cat[4];
    } *steps;
    cat_sum between[4];
    int ngaps;
    double *cp_metric; /* ncallpaths x nmetrics */
    unsigned char *cp_has; /* the callpath has rows of the metric */
} summary;

static int metric_index(const profile *p, const char *name)
{
    for (int i = 0; i < p->nmetrics; i++)
        if (!strcmp(p->metrics[i], name))
            return i;
    return -1;
}

static void add_metric(const summary *s, cat_sum *c, int metric, double v)
{
    if (metric == s->metric_time)
        c->time += v;
    else if (metric == s->metric_visits)
        c->visits += v;
    else if (metric == s->metric_bytes)
        c->bytes += v;
}

static int summarize(const profile *p, summary *s)
{
    memset(s, 0, sizeof *s);
    s->metric_time = metric_index(p, "time");
    s->metric_visits = metric_index(p, "visits");
    s->metric_bytes = metric_index(p, "bytes");
    size_t ncells = (size_t)(p->ncallpaths ? p->ncallpaths : 1) * (size_t)(p->nmetrics ? p->nmetrics : 1);
    s->cp_metric = calloc(ncells, sizeof *s->cp_metric);
    s->cp_has = calloc(ncells, 1);
    /* rows are sorted by (rank, phase, step): count the steps first */
    size_t nsteps = 0;
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i], *q = i ? &p->rows[i - 1] : NULL;
        if (r->phase != PROFILE_BETWEEN &&
            (!q || q->rank != r->rank || q->phase != r->phase || q->step != r->step))
            nsteps++;
    }
    s->steps = calloc(nsteps ? nsteps : 1, sizeof *s->steps);
    if (!s->cp_metric || !s->cp_has || !s->steps)
        return -1;
    int last_gap_rank = -1, last_gap = -1;
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        int cat = p->callpaths[r->callpath].category;
        s->cp_metric[(size_t)r->callpath * (size_t)p->nmetrics + (size_t)r->metric] += r->value;
        s->cp_has[(size_t)r->callpath * (size_t)p->nmetrics + (size_t)r->metric] = 1;
        if (r->phase == PROFILE_BETWEEN) {
            add_metric(s, &s->between[cat], r->metric, r->value);
            if (r->rank != last_gap_rank || r->step != last_gap) {
                s->ngaps++;
                last_gap_rank = r->rank;
                last_gap = r->step;
            }
            continue;
        }
        /* rows are sorted by (rank, phase, step): a new step when any changes */
        struct step_sum *st = s->nsteps ? &s->steps[s->nsteps - 1] : NULL;
        if (!st || st->rank != r->rank || st->phase != r->phase || st->index != r->step) {
            st = &s->steps[s->nsteps++];
            st->rank = r->rank;
            st->phase = r->phase;
            st->index = r->step;
        }
        add_metric(s, &st->cat[cat], r->metric, r->value);
    }
    return 0;
}

/* A trace's steps that hold no rows are steps too: lists all nsteps of
 * them (one rank, train), keeping the sums found. */
static int complete_steps(summary *s, int nsteps, int rank)
{
    if (nsteps <= s->nsteps)
        return 0;
    struct step_sum *all = calloc((size_t)nsteps, sizeof *all);
    if (!all)
        return -1;
    for (int i = 0; i < nsteps; i++) {
        all[i].rank = rank;
        all[i].phase = PROFILE_TRAIN;
        all[i].index = i;
    }
    for (int i = 0; i < s->nsteps; i++)
        if (s->steps[i].index >= 0 && s->steps[i].index < nsteps)
            all[s->steps[i].index] = s->steps[i];
    free(s->steps);
    s->steps = all;
    s->nsteps = nsteps;
    return 0;
}

static void summary_free(summary *s)
{
    free(s->steps);
    free(s->cp_metric);
    free(s->cp_has);
}

/* Counts print as integers, times as reals. */
static json_t *number(double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *cat_json(const cat_sum *c)
{
    json_t *o = json_object();
    for (int k = 0; k < 4; k++) {
        json_t *m = json_object();
        json_object_set_new(m, "time", json_real(c[k].time));
        json_object_set_new(m, "visits", number(c[k].visits));
        json_object_set_new(m, "bytes", number(c[k].bytes));
        json_object_set_new(o, profile_category_name(k), m);
    }
    return o;
}

static int print_json(const profile *p, const summary *s, ingest_kind kind)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string(ingest_kind_name(kind)));
    int one_rank = p->nranks == 1 && p->nrows > 0;
    json_object_set_new(doc, "rank", one_rank ? json_integer(p->rows[0].rank) : json_null());
    json_t *steps = json_array();
    for (int i = 0; i < s->nsteps; i++) {
        json_t *st = json_object();
        if (!one_rank)
            json_object_set_new(st, "rank", json_integer(s->steps[i].rank));
        json_object_set_new(st, "phase", json_string(profile_phase_name(s->steps[i].phase)));
        json_object_set_new(st, "index", json_integer(s->steps[i].index));
        json_object_set_new(st, "totals", cat_json(s->steps[i].cat));
        json_array_append_new(steps, st);
    }
    json_object_set_new(doc, "steps", steps);
    json_object_set_new(doc, "between_steps", cat_json(s->between));
    json_t *cps = json_array();
    for (int i = 0; i < p->ncallpaths; i++) {
        json_t *m = json_object();
        for (int k = 0; k < p->nmetrics; k++) {
            size_t at = (size_t)i * (size_t)p->nmetrics + (size_t)k;
            if (s->cp_has[at])
                json_object_set_new(m, p->metrics[k],
                                    k == s->metric_time ? json_real(s->cp_metric[at])
                                                        : number(s->cp_metric[at]));
        }
        json_array_append_new(cps, json_pack("{s:s, s:s, s:o}", "name", p->callpaths[i].name,
                                             "category",
                                             profile_category_name(p->callpaths[i].category),
                                             "metrics", m));
    }
    json_object_set_new(doc, "callpaths", cps);
    size_t len;
    char *text = api_json_text(doc, &len); /* reals in their shortest exact form */
    json_decref(doc);
    if (!text)
        return 1;
    fwrite(text, 1, len, stdout);
    putchar('\n');
    free(text);
    return 0;
}

/* "name" cut to n bytes of display, not inside a UTF-8 sequence. */
static int cut(const char *name, int n)
{
    int len = (int)strlen(name);
    if (len <= n)
        return len;
    while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static void print_cats(const cat_sum *c)
{
    for (int k = 0; k < 4; k++) {
        printf("  %s %.6g s (%.0f)", profile_category_name(k), c[k].time, c[k].visits);
        if (k == PROFILE_MEM)
            printf(" %.0f B", c[k].bytes);
    }
    putchar('\n');
}

typedef struct top_ref {
    double time;
    int id;
} top_ref;

static int cmp_top(const void *a, const void *b)
{
    const top_ref *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int print_text(const char *path, const profile *p, const summary *s, ingest_kind kind,
                      const ingest_trace_info *info)
{
    printf("%s: %s", path, ingest_kind_name(kind));
    if (kind == INGEST_KIND_KINETO) {
        printf("%s, rank %d", info->gzip ? " (gzip)" : "", info->rank);
        if (info->world_size)
            printf(" of %d", info->world_size);
        printf(", %.2f MB of JSON, %lld events, %d pass%s", (double)info->bytes / 1e6,
               info->events, info->passes, info->passes == 1 ? "" : "es");
    } else if (kind == INGEST_KIND_NSYS) {
        printf(", rank %d, %lld events", info->rank, info->events);
        if (info->schema[0])
            printf(", export schema %s", info->schema);
    } else {
        printf(", %d rank%s, repetition %d", p->nranks, p->nranks == 1 ? "" : "s", p->repetition);
    }
    putchar('\n');
    if (kind != INGEST_KIND_PERFCAST && info->unmatched > 0)
        printf("device events whose launch was not found (placed by their own start): %lld\n",
               info->unmatched);
    if (kind != INGEST_KIND_PERFCAST && info->nsteps == 0)
        printf("no step markers: the whole trace is one step\n");
    printf("steps: %d\n", s->nsteps);
    for (int i = 0; i < s->nsteps; i++) {
        const struct step_sum *st = &s->steps[i];
        if (p->nranks > 1)
            printf("rank %d ", st->rank);
        printf("%s step %d", profile_phase_name(st->phase), st->index);
        if (kind != INGEST_KIND_PERFCAST && st->index < info->nsteps)
            printf(" (%s, %.6g s)", info->steps[st->index].label,
                   info->steps[st->index].end - info->steps[st->index].start);
        printf(":");
        print_cats(st->cat);
    }
    if (s->ngaps > 0) {
        printf("between steps (%d gap%s):", s->ngaps, s->ngaps == 1 ? "" : "s");
        print_cats(s->between);
    }
    int per_cat[4] = {0};
    for (int i = 0; i < p->ncallpaths; i++)
        per_cat[p->callpaths[i].category]++;
    printf("callpaths: %d (comp %d, comm %d, mem %d, host %d)\n", p->ncallpaths,
           per_cat[PROFILE_COMP], per_cat[PROFILE_COMM], per_cat[PROFILE_MEM],
           per_cat[PROFILE_HOST]);
    if (kind != INGEST_KIND_PERFCAST)
        printf("times: the sum of each category's event durations in the step (count in "
               "parentheses); comp, comm and mem are device kernels and copies, which may "
               "overlap each other; host is CPU operators counted at every level of their "
               "nesting (a call inside another is in both), so host can exceed the step's wall "
               "time in parentheses\n");
    if (s->metric_time < 0 || p->ncallpaths == 0)
        return 0;
    top_ref *refs = malloc((size_t)p->ncallpaths * sizeof *refs);
    if (!refs)
        return 1;
    for (int k = 0; k < 4; k++) {
        int n = 0;
        for (int i = 0; i < p->ncallpaths; i++)
            if (p->callpaths[i].category == k)
                refs[n++] = (top_ref){s->cp_metric[(size_t)i * (size_t)p->nmetrics +
                                                   (size_t)s->metric_time], i};
        if (n == 0)
            continue;
        qsort(refs, (size_t)n, sizeof *refs, cmp_top);
        printf("top %s callpaths by time:\n", profile_category_name(k));
        for (int j = 0; j < n && j < TOP_PER_CATEGORY; j++) {
            const char *name = p->callpaths[refs[j].id].name;
            double visits = s->metric_visits >= 0
                                ? s->cp_metric[(size_t)refs[j].id * (size_t)p->nmetrics +
                                               (size_t)s->metric_visits]
                                : 0;
            printf("  %12.6g s %8.0f  %.*s%s\n", refs[j].time, visits, cut(name, 100), name,
                   (int)strlen(name) > cut(name, 100) ? "..." : "");
        }
    }
    free(refs);
    return 0;
}

/* ---- reading ---------------------------------------------------------------------- */

/* Reads path (a regular file: streamed or opened in place; else whole into
 * memory) with the reader for *kind (sniffed when UNKNOWN). */
static int read_input(const ingest_args *a, ingest_kind *kind, const ingest_trace_options *o,
                      profile *p, ingest_trace_info *info, ingest_error *ie)
{
    memset(info, 0, sizeof *info);
    int fd = strcmp(a->path, "-") ? open(a->path, O_RDONLY) : -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        /* stdin, a pipe or something else: the bytes into memory */
        cli_file in;
        if (cli_file_open(a->path, &in, ie->msg, sizeof ie->msg) < 0) {
            ie->offset = -1;
            return -2;
        }
        if (*kind == INGEST_KIND_UNKNOWN)
            *kind = ingest_sniff(in.data, in.len);
        int rc = -3;
        if (ingest_kind_is_profile(*kind))
            rc = ingest_read_profile(*kind, in.data, in.len, o, p, info, ie);
        cli_file_close(&in);
        return rc;
    }
    char head[4096];
    ssize_t n = pread(fd, head, sizeof head, 0);
    if (n < 0) {
        snprintf(ie->msg, sizeof ie->msg, "cannot read: %s", strerror(errno));
        close(fd);
        return -2;
    }
    if (*kind == INGEST_KIND_UNKNOWN)
        *kind = ingest_sniff(head, (size_t)n);
    int rc = -3;
    if (*kind == INGEST_KIND_KINETO) {
        ingest_input in = {.data = NULL, .len = 0, .fd = fd};
        rc = ingest_kineto(&in, o, p, info, ie);
    } else if (*kind == INGEST_KIND_NSYS) {
        rc = ingest_nsys_path(a->path, o, p, info, ie);
    } else if (*kind == INGEST_KIND_PERFCAST || *kind == INGEST_KIND_CUBE) {
        cli_file in;
        if (cli_file_open(a->path, &in, ie->msg, sizeof ie->msg) < 0) {
            close(fd);
            return -2;
        }
        rc = ingest_read_profile(*kind, in.data, in.len, o, p, info, ie);
        cli_file_close(&in);
    }
    close(fd);
    return rc;
}

int cmd_ingest(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            ingest_usage_to(stdout);
            return 0;
        }
    ingest_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    if (strcmp(a.path, "-") && cli_is_dir(a.path))
        return cli_cube_set_summary(a.path, a.json);
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    o.rank = a.rank;
    o.markers = a.markers;
    o.validation = a.validation;
    o.phase = a.phase;
    ingest_kind kind = a.kind;
    profile p;
    ingest_trace_info info;
    ingest_error ie = {.offset = -1};
    memset(&p, 0, sizeof p);
    rc = read_input(&a, &kind, &o, &p, &info, &ie);
    if (rc == -2) {
        fprintf(stderr, "perfcast ingest: %s\n", ie.msg);
        return 2;
    }
    if (rc == -3) {
        if (kind == INGEST_KIND_UNKNOWN)
            fprintf(stderr, "perfcast ingest: %s: cannot tell the format from the bytes; use "
                            "--format %s\n", a.path, ingest_kind_names());
        else
            fprintf(stderr, "perfcast ingest: %s: %s holds aggregated Extra-P points, not a "
                            "profile; fit it with perfcast model\n", a.path,
                    ingest_kind_name(kind));
        return 2;
    }
    if (rc < 0) {
        fprintf(stderr, "perfcast ingest: %s: %s: %s\n", a.path, ingest_kind_name(kind), ie.msg);
        return 2;
    }
    if (a.rank >= 0 && kind == INGEST_KIND_PERFCAST)
        for (size_t i = 0; i < p.nrows; i++)
            if (p.rows[i].rank != a.rank) {
                fprintf(stderr, "perfcast ingest: %s: --rank %d, but the profile has rank %d\n",
                        a.path, a.rank, p.rows[i].rank);
                profile_free(&p);
                return 2;
            }
    summary s;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    if (summarize(&p, &s) < 0 ||
        (kind != INGEST_KIND_PERFCAST && complete_steps(&s, info.nsteps, info.rank) < 0)) {
        fprintf(stderr, "perfcast ingest: out of memory\n");
        rc = 1;
    } else {
        rc = a.json ? print_json(&p, &s, kind) : print_text(a.path, &p, &s, kind, &info);
    }
    fflush(stdout);
    summary_free(&s);
    profile_free(&p);
    ingest_trace_info_free(&info);
    return rc;
}
