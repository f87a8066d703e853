/*
 * test_ingest_extrap.c — the Extra-P readers (ingest/extrap.h) against the
 * real Extra-P example files in tests/data/extrap/inputs and hand-written
 * malformed inputs.
 *
 * Every buffer handed to a reader is an exact-size heap copy without a
 * terminating NUL, so under AddressSanitizer any read past len fails the run.
 * Run from the repository root.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap.h"
#include "tests/check.h"

#define INPUTS "tests/data/extrap/inputs/"

/* An exact-size copy of s, not NUL-terminated. */
static char *exact_copy(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    if (p && n)
        memcpy(p, s, n);
    return p;
}

static char *load_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    char *exact = exact_copy(buf, n);
    free(buf);
    *len = n;
    return exact;
}

static ingest_format format_of(const char *path, const char *buf, size_t len)
{
    return ingest_extrap_format_from_path(path, buf, len);
}

/* Reads a fixture by its name's format; returns the reader's status. */
static int read_fixture(const char *name, ingest_experiment *e, ingest_error *err)
{
    char path[512];
    size_t len = 0;
    snprintf(path, sizeof(path), INPUTS "%s", name);
    char *buf = load_file(path, &len);
    if (!buf) {
        memset(e, 0, sizeof(*e));
        snprintf(err->msg, sizeof(err->msg), "cannot open %.200s", name);
        return -2;
    }
    int rc = ingest_extrap_read(buf, len, format_of(path, buf, len), e, err);
    free(buf);
    return rc;
}

static int read_fixture_as(const char *name, ingest_format fmt, ingest_experiment *e,
                           ingest_error *err)
{
    char path[512];
    size_t len = 0;
    snprintf(path, sizeof(path), INPUTS "%s", name);
    char *buf = load_file(path, &len);
    if (!buf)
        return -2;
    int rc = ingest_extrap_read(buf, len, fmt, e, err);
    free(buf);
    return rc;
}

/* Reads a string through an exact-size, unterminated copy. */
static int read_text(const char *s, ingest_format fmt, ingest_experiment *e, ingest_error *err)
{
    size_t n = strlen(s);
    char *buf = exact_copy(s, n);
    int rc = ingest_extrap_read(buf, n, fmt, e, err);
    free(buf);
    return rc;
}

static int is_zeroed(const ingest_experiment *e)
{
    static const ingest_experiment zero;
    return memcmp(e, &zero, sizeof(zero)) == 0;
}

static double coord_at(const ingest_experiment *e, int c, int p)
{
    return e->coords[(size_t)c * e->nparams + p];
}

static int series_index(const ingest_experiment *e, const char *cp, const char *metric)
{
    for (int s = 0; s < e->nseries; s++)
        if (strcmp(e->callpaths[e->series[s].callpath], cp) == 0 &&
            strcmp(e->metrics[e->series[s].metric], metric) == 0)
            return s;
    return -1;
}

static int nvalues_at(const ingest_series *s, int p)
{
    return s->rep_start[p + 1] - s->rep_start[p];
}

/* Everything equal: names, coordinates, series, points and values, in order. */
static int experiments_equal(const ingest_experiment *a, const ingest_experiment *b)
{
    if (a->nparams != b->nparams || a->ncoords != b->ncoords ||
        a->ncallpaths != b->ncallpaths || a->nmetrics != b->nmetrics || a->nseries != b->nseries)
        return 0;
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i], b->params[i]) != 0)
            return 0;
    for (int i = 0; i < a->ncallpaths; i++)
        if (strcmp(a->callpaths[i], b->callpaths[i]) != 0)
            return 0;
    for (int i = 0; i < a->nmetrics; i++)
        if (strcmp(a->metrics[i], b->metrics[i]) != 0)
            return 0;
    for (int i = 0; i < a->ncoords * a->nparams; i++)
        if (a->coords[i] != b->coords[i])
            return 0;
    for (int s = 0; s < a->nseries; s++) {
        const ingest_series *x = &a->series[s], *y = &b->series[s];
        if (x->callpath != y->callpath || x->metric != y->metric || x->npoints != y->npoints)
            return 0;
        for (int p = 0; p < x->npoints; p++)
            if (x->coord[p] != y->coord[p] || x->rep_start[p] != y->rep_start[p])
                return 0;
        if (x->rep_start[x->npoints] != y->rep_start[y->npoints])
            return 0;
        for (int k = 0; k < x->rep_start[x->npoints]; k++)
            if (x->values[k] != y->values[k])
                return 0;
    }
    return 1;
}

/* Structural invariants every successful read must satisfy. */
static int well_formed(const ingest_experiment *e)
{
    if (e->nparams < 1 || e->ncoords < 1 || e->ncallpaths < 1 || e->nmetrics < 1 ||
        e->nseries < 1)
        return 0;
    for (int s = 0; s < e->nseries; s++) {
        const ingest_series *x = &e->series[s];
        if (x->callpath < 0 || x->callpath >= e->ncallpaths || x->metric < 0 ||
            x->metric >= e->nmetrics || x->npoints != e->ncoords || x->rep_start[0] != 0)
            return 0;
        char *seen = calloc((size_t)e->ncoords, 1);
        int ok = seen != NULL;
        for (int p = 0; ok && p < x->npoints; p++) {
            if (x->coord[p] < 0 || x->coord[p] >= e->ncoords || seen[x->coord[p]] ||
                nvalues_at(x, p) < 1)
                ok = 0;
            else
                seen[x->coord[p]] = 1;
        }
        free(seen);
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- fixtures ------------------------------------------------------------ */

static void test_one_parameter_1(void)
{
    ingest_experiment e;
    ingest_error err;
    int rc = read_fixture("one_parameter_1.txt", &e, &err);
    check(rc == 0, "one_parameter_1.txt reads: %s", err.msg);
    if (rc != 0)
        return;
    check(e.nparams == 1 && strcmp(e.params[0], "x") == 0, "one parameter x");
    check(e.ncoords == 5, "5 coordinates, got %d", e.ncoords);
    for (int c = 0; c < e.ncoords && c < 5; c++)
        check(coord_at(&e, c, 0) == 20.0 + 10.0 * c, "coordinate %d is %g", c, 20.0 + 10 * c);
    check(e.ncallpaths == 1 && strcmp(e.callpaths[0], "compute") == 0, "callpath compute");
    check(e.nmetrics == 1 && strcmp(e.metrics[0], "time") == 0, "metric time");
    check(e.nseries == 1, "one series, got %d", e.nseries);
    const ingest_series *s = &e.series[0];
    check(s->callpath == 0 && s->metric == 0 && s->npoints == 5, "series compute/time, 5 points");
    for (int p = 0; p < 5; p++) {
        check(s->coord[p] == p, "point %d at coordinate %d", p, p);
        check(nvalues_at(s, p) == 6, "point %d has 6 repetitions, got %d", p, nvalues_at(s, p));
    }
    static const double first[6] = {82.00848518948744,  81.42023198759563,  81.98984501217201,
                                    80.76019835580321,  82.54252892405795,  82.54252892405795};
    for (int k = 0; k < 6; k++)
        check(s->values[k] == first[k], "first DATA value %d is %.17g, got %.17g", k, first[k],
              s->values[k]);
    check(s->values[s->rep_start[4]] == 725.3886983183301, "first value of the last DATA line");
    check(s->values[s->rep_start[5] - 1] == 721.0616186790007, "last value of the last DATA line");
    ingest_experiment_free(&e);
    check(is_zeroed(&e), "free zeroes the experiment");
}

static void test_text_layouts(void)
{
    ingest_experiment e;
    ingest_error err;

    /* POINTS 1000 2000 4000 8000 16000 without parentheses, no METRIC. */
    if (read_fixture("one_parameter_7.txt", &e, &err) == 0) {
        check(e.ncoords == 5 && coord_at(&e, 4, 0) == 16000.0, "bare POINTS give 5 coordinates");
        check(e.nmetrics == 1 && strcmp(e.metrics[0], "") == 0, "no METRIC: the metric \"\"");
        check(e.ncallpaths == 1 && strcmp(e.callpaths[0], "met1") == 0,
              "REGION name loses its trailing space");
        ingest_experiment_free(&e);
    } else {
        check(0, "one_parameter_7.txt: %s", err.msg);
    }

    /* PARAMETER p q on one line; POINTS (1000 10) (2000 20) ... */
    if (read_fixture("two_parameter_4.txt", &e, &err) == 0) {
        check(e.nparams == 2 && strcmp(e.params[0], "p") == 0 && strcmp(e.params[1], "q") == 0,
              "PARAMETER p q gives two parameters");
        check(e.ncoords == 5 && coord_at(&e, 1, 0) == 2000.0 && coord_at(&e, 1, 1) == 20.0,
              "second point is (2000, 20)");
        check(e.ncallpaths == 4 && e.nseries == 4, "four regions, four series");
        ingest_experiment_free(&e);
    } else {
        check(0, "two_parameter_4.txt: %s", err.msg);
    }

    /* One POINTS line per point vs all points on one line: same experiment. */
    ingest_experiment a, b;
    if (read_fixture("two_parameter_1.txt", &a, &err) == 0) {
        check(a.ncoords == 25, "25 coordinates, got %d", a.ncoords);
        check(coord_at(&a, 0, 0) == 20 && coord_at(&a, 0, 1) == 1 && coord_at(&a, 1, 1) == 2 &&
                  coord_at(&a, 5, 0) == 30 && coord_at(&a, 24, 0) == 60 && coord_at(&a, 24, 1) == 5,
              "coordinates in POINTS order");
        if (read_fixture("two_parameter_2.txt", &b, &err) == 0) {
            check(experiments_equal(&a, &b), "POINTS split over lines or not: same experiment");
            ingest_experiment_free(&b);
        }
        ingest_experiment_free(&a);
    } else {
        check(0, "two_parameter_1.txt: %s", err.msg);
    }

    /* REGION merge, METRIC time; REGION sort, METRIC time; then both again with flops */
    if (read_fixture("one_parameter_5.txt", &e, &err) == 0) {
        check(e.ncallpaths == 2 && strcmp(e.callpaths[0], "merge") == 0 &&
                  strcmp(e.callpaths[1], "sort") == 0,
              "callpaths merge, sort");
        check(e.nmetrics == 2 && strcmp(e.metrics[0], "time") == 0 &&
                  strcmp(e.metrics[1], "flops") == 0,
              "metrics time, flops");
        check(e.nseries == 4 && series_index(&e, "merge", "time") == 0 &&
                  series_index(&e, "sort", "time") == 1 && series_index(&e, "merge", "flops") == 2 &&
                  series_index(&e, "sort", "flops") == 3,
              "series in the order of the file's blocks");
        ingest_experiment_free(&e);
    } else {
        check(0, "one_parameter_5.txt: %s", err.msg);
    }

    if (read_fixture("one_parameter_2.txt", &e, &err) == 0) {
        check(e.ncallpaths >= 3 && strcmp(e.callpaths[0], "main") == 0 &&
                  strcmp(e.callpaths[2], "main->merge->comp1") == 0,
              "callpaths keep their -> paths");
        ingest_experiment_free(&e);
    } else {
        check(0, "one_parameter_2.txt: %s", err.msg);
    }

    if (read_fixture("three_parameter_1.txt", &e, &err) == 0) {
        check(e.nparams == 3 && strcmp(e.params[2], "z") == 0, "three parameters x y z");
        check(coord_at(&e, 0, 2) == 100, "z of the first point is 100");
        ingest_experiment_free(&e);
    } else {
        check(0, "three_parameter_1.txt: %s", err.msg);
    }
}

static void test_json_layouts(void)
{
    ingest_experiment a, b;
    ingest_error err;

    /* Legacy input_1.JSON and current-layout input1.json hold the same data. */
    int ra = read_fixture("input_1.JSON", &a, &err);
    check(ra == 0, "input_1.JSON (legacy) reads: %s", err.msg);
    int rb = read_fixture("input1.json", &b, &err);
    check(rb == 0, "input1.json (current) reads: %s", err.msg);
    if (ra == 0 && rb == 0) {
        check(experiments_equal(&a, &b), "legacy and current layout give the same experiment");
        check(a.nparams == 1 && strcmp(a.params[0], "x") == 0, "parameter x");
        check(a.ncoords == 5 && coord_at(&a, 0, 0) == 4 && coord_at(&a, 4, 0) == 64,
              "coordinates 4..64");
        check(a.ncallpaths == 1 && strcmp(a.callpaths[0], "sweep") == 0, "callpath sweep");
        check(a.nseries == 1 && nvalues_at(&a.series[0], 0) == 5 && a.series[0].values[0] == 3.5,
              "5 repetitions of 3.5 at x=4");
    }
    if (ra == 0)
        ingest_experiment_free(&a);
    if (rb == 0)
        ingest_experiment_free(&b);

    /* input_12.JSON lists its parameters with ids 2, 1: sorted by id it is input_5. */
    ra = read_fixture("input_12.JSON", &a, &err);
    rb = read_fixture("input_5.JSON", &b, &err);
    if (ra == 0 && rb == 0) {
        check(strcmp(a.params[0], "x") == 0 && strcmp(a.params[1], "y") == 0,
              "legacy parameters ordered by id");
        check(experiments_equal(&a, &b), "input_12.JSON equals input_5.JSON");
    } else {
        check(0, "input_12/input_5: %s", err.msg);
    }
    if (ra == 0)
        ingest_experiment_free(&a);
    if (rb == 0)
        ingest_experiment_free(&b);

    if (read_fixture("input_10.JSON", &a, &err) == 0) {
        check(a.nparams == 4 && a.ncoords == 625 && a.nseries == 1,
              "input_10.JSON: 4 parameters, 625 coordinates");
        check(nvalues_at(&a.series[0], 0) == 5, "5 repetitions aggregated per coordinate");
        ingest_experiment_free(&a);
    } else {
        check(0, "input_10.JSON: %s", err.msg);
    }

    /* A JSON Lines file handed to the JSON reader is read as JSON Lines. */
    ra = read_fixture_as("input_1.jsonl", INGEST_FORMAT_EXTRAP_JSON, &a, &err);
    rb = read_fixture("input_1.jsonl", &b, &err);
    check(ra == 0 && rb == 0, "input_1.jsonl reads as json and as jsonl: %s", err.msg);
    if (ra == 0 && rb == 0)
        check(experiments_equal(&a, &b), "JSON reader falls back to JSON Lines");
    if (ra == 0)
        ingest_experiment_free(&a);
    if (rb == 0)
        ingest_experiment_free(&b);
}

static void test_line_formats(void)
{
    ingest_experiment a, b;
    ingest_error err;

    if (read_fixture("reduced.jsonl", &a, &err) == 0) {
        check(a.ncallpaths == 1 && strcmp(a.callpaths[0], "<root>") == 0,
              "no callpath: <root>");
        check(a.nmetrics == 1 && strcmp(a.metrics[0], "<default>") == 0,
              "no metric: <default>");
        ingest_experiment_free(&a);
    } else {
        check(0, "reduced.jsonl: %s", err.msg);
    }

    if (read_fixture("extended2.jsonl", &a, &err) == 0) {
        check(a.nparams == 2 && strcmp(a.params[0], "x") == 0 && strcmp(a.params[1], "y") == 0,
              "params x, y in the first line's order");
        check(a.ncoords == 9 && nvalues_at(&a.series[0], 0) == 5 && a.series[0].values[0] == 2,
              "\"value\" lists give the repetitions");
        ingest_experiment_free(&a);
    } else {
        check(0, "extended2.jsonl: %s", err.msg);
    }

    /* TaLPas talpas_7.txt and text one_parameter_3.txt hold the same data. */
    int ra = read_fixture("talpas_7.txt", &a, &err);
    int rb = read_fixture("one_parameter_3.txt", &b, &err);
    check(ra == 0 && rb == 0, "talpas_7.txt and one_parameter_3.txt read: %s", err.msg);
    if (ra == 0 && rb == 0)
        check(experiments_equal(&a, &b), "TaLPas and text give the same experiment");
    if (ra == 0)
        ingest_experiment_free(&a);
    if (rb == 0)
        ingest_experiment_free(&b);

    /* TaLPas: every ';' is a ',', also inside strings, as in Extra-P. */
    const char *talpas = "{\"parameters\":{\"x\":20};\"metric\":\"time\";\"callpath\":\"a;b\";\"value\":[1;2]}\n"
                         "{\"parameters\":{\"x\":30};\"metric\":\"time\";\"callpath\":\"a;b\";\"value\":3}\n";
    if (read_text(talpas, INGEST_FORMAT_TALPAS, &a, &err) == 0) {
        check(strcmp(a.callpaths[0], "a,b") == 0, "';' inside a TaLPas string reads as ','");
        check(nvalues_at(&a.series[0], 0) == 2 && a.series[0].values[1] == 2,
              "TaLPas value list");
        ingest_experiment_free(&a);
    } else {
        check(0, "TaLPas with ';' in a string: %s", err.msg);
    }

    /* Coordinates are ordered by first use walking series, not by line. */
    const char *interleaved = "{\"params\":{\"x\":1},\"callpath\":\"A\",\"value\":1}\n"
                              "{\"params\":{\"x\":2},\"callpath\":\"B\",\"value\":2}\n"
                              "{\"params\":{\"x\":3},\"callpath\":\"A\",\"value\":3}\n"
                              "{\"params\":{\"x\":3},\"callpath\":\"B\",\"value\":[4,5]}\r\n"
                              "{\"params\":{\"x\":1},\"callpath\":\"B\",\"value\":6}\r"
                              "\n"
                              "{\"params\":{\"x\":2},\"callpath\":\"A\",\"value\":7}\n"
                              "{\"params\":{\"x\":1},\"callpath\":\"A\",\"value\":8}";
    if (read_text(interleaved, INGEST_FORMAT_EXTRAP_JSONL, &a, &err) == 0) {
        check(a.ncoords == 3 && coord_at(&a, 0, 0) == 1 && coord_at(&a, 1, 0) == 3 &&
                  coord_at(&a, 2, 0) == 2,
              "coordinates 1, 3, 2 as Extra-P orders them");
        const ingest_series *s = &a.series[0];
        check(s->npoints == 3 && s->coord[0] == 0 && nvalues_at(s, 0) == 2 &&
                  s->values[0] == 1 && s->values[1] == 8,
              "repetitions of A at x=1 are 1 and 8");
        const ingest_series *t = &a.series[1];
        check(t->coord[0] == 2 && t->coord[1] == 1 && t->coord[2] == 0,
              "B's points in its own order: x=2, 3, 1");
        ingest_experiment_free(&a);
    } else {
        check(0, "interleaved JSON Lines: %s", err.msg);
    }
}

/* Every fixture reads, except the two Extra-P itself rejects. */
static void test_all_fixtures(void)
{
    DIR *d = opendir(INPUTS);
    check(d != NULL, "open %s", INPUTS);
    if (!d)
        return;
    int files = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t nl = strlen(ent->d_name);
        /* Extra-P's text, JSON and TaLPas files; the Cube sets (directories), saved
         * experiments (.extra-p) and Extra-P's licence are read by test_cube */
        if (ent->d_name[0] == '.' || !strncmp(ent->d_name, "cubeset_", 8) ||
            !strncmp(ent->d_name, "LICENSE", 7) ||
            (nl > 8 && !strcmp(ent->d_name + nl - 8, ".extra-p")))
            continue;
        files++;
        ingest_experiment e;
        ingest_error err;
        int rc = read_fixture(ent->d_name, &e, &err);
        int must_fail = strcmp(ent->d_name, "input_11.JSON") == 0 ||
                        strcmp(ent->d_name, "talpas_10_neg.txt") == 0;
        if (must_fail) {
            check(rc == -1 && err.msg[0] != '\0' && is_zeroed(&e), "%s is rejected",
                  ent->d_name);
        } else {
            check(rc == 0, "%s reads: %s", ent->d_name, rc == 0 ? "" : err.msg);
            if (rc == 0) {
                check(well_formed(&e), "%s: every series has one point per coordinate",
                      ent->d_name);
                ingest_experiment_free(&e);
            }
        }
    }
    closedir(d);
    check(files >= 50, "found the fixtures (%d)", files);

    ingest_experiment e;
    ingest_error err;
    read_fixture("input_11.JSON", &e, &err);
    check(strstr(err.msg, "\"sweep\"") && strstr(err.msg, "4 of the 5 coordinates"),
          "input_11.JSON names the short series: %s", err.msg);
    read_fixture("talpas_10_neg.txt", &e, &err);
    check(err.line == 27 && strstr(err.msg, "\"flops\"") && strstr(err.msg, "3 of the 5"),
          "talpas_10_neg.txt: flops has 3 of 5 points, from line 27: %s", err.msg);
}

static void test_format_detection(void)
{
    const char talpas[] = "\n  {\"parameters\":{\"x\":1}}";
    const char text[] = "PARAMETER x\n";
    check(ingest_extrap_format_from_path("a/b.txt", text, sizeof(text) - 1) ==
              INGEST_FORMAT_EXTRAP_TEXT, ".txt is text");
    check(ingest_extrap_format_from_path("b.txt", talpas, sizeof(talpas) - 1) ==
              INGEST_FORMAT_TALPAS, ".txt starting with '{' is TaLPas");
    check(ingest_extrap_format_from_path("b.txt", NULL, 0) == INGEST_FORMAT_EXTRAP_TEXT,
          "empty .txt is text");
    check(ingest_extrap_format_from_path("input_1.JSON", NULL, 0) == INGEST_FORMAT_EXTRAP_JSON,
          ".JSON is JSON");
    check(ingest_extrap_format_from_path("x.json", NULL, 0) == INGEST_FORMAT_EXTRAP_JSON,
          ".json is JSON");
    check(ingest_extrap_format_from_path("x.jsonl", NULL, 0) == INGEST_FORMAT_EXTRAP_JSONL,
          ".jsonl is JSON Lines");
    check(ingest_extrap_format_from_path("x.csv", NULL, 0) == INGEST_FORMAT_UNKNOWN,
          ".csv is unknown");
    const char *names[] = {"extrap-text", "extrap-json", "extrap-jsonl", "talpas"};
    const char *aliases[] = {"text", "json", "jsonl", "talpas"};
    for (int i = 0; i < 4; i++) {
        check(strcmp(ingest_extrap_format_name(ingest_extrap_format_from_name(names[i])),
                     names[i]) == 0,
              "format name %s round-trips", names[i]);
        check(ingest_extrap_format_from_name(aliases[i]) == ingest_extrap_format_from_name(names[i]),
              "the old name %s is an alias of %s", aliases[i], names[i]);
    }
    check(ingest_extrap_format_from_name("xml") == INGEST_FORMAT_UNKNOWN, "xml is unknown");

    ingest_experiment e;
    ingest_error err;
    check(read_text("PARAMETER x\n", INGEST_FORMAT_UNKNOWN, &e, &err) == -1 && is_zeroed(&e),
          "reading an unknown format fails");
}

/* ---- malformed input ----------------------------------------------------- */

/* Expects failure with err.line == line and msg containing want. */
static void expect_error(const char *label, const char *input, ingest_format fmt, long line,
                         const char *want)
{
    ingest_experiment e;
    ingest_error err;
    memset(&e, 0x5a, sizeof(e));
    int rc = read_text(input, fmt, &e, &err);
    check(rc == -1, "%s: rejected", label);
    if (rc == 0) {
        ingest_experiment_free(&e);
        return;
    }
    check(is_zeroed(&e), "%s: out left zeroed", label);
    check(err.line == line, "%s: line %ld, got %ld (%s)", label, line, err.line, err.msg);
    check(strstr(err.msg, want) != NULL, "%s: message has \"%s\": %s", label, want, err.msg);
}

static const char TEXT_OK[] = "PARAMETER x\n"
                              "POINTS 1 2 3\n"
                              "REGION main\n"
                              "METRIC time\n"
                              "DATA 1 1.5\n"
                              "DATA 2\n"
                              "DATA 3\n";

static void test_text_errors(void)
{
    ingest_format T = INGEST_FORMAT_EXTRAP_TEXT;
    ingest_experiment e;
    ingest_error err;
    check(read_text(TEXT_OK, T, &e, &err) == 0, "the base text input reads: %s", err.msg);
    check(e.nseries == 1 && e.series[0].npoints == 3 && nvalues_at(&e.series[0], 0) == 2,
          "base text input: 3 points, 2 repetitions at the first");
    ingest_experiment_free(&e);

    expect_error("empty text", "", T, 0, "input is empty");
    expect_error("blank text", "\n  \n\t\n", T, 0, "input is empty");
    expect_error("unknown field", "PARAMETER x\nPOINTS 1 2\nFOO bar\n", T, 3,
                 "unknown field \"FOO\"");
    expect_error("DATA before POINTS", "PARAMETER x\nREGION r\nDATA 1\n", T, 3,
                 "DATA before any POINTS");
    expect_error("DATA before PARAMETER", "DATA 1\n", T, 1, "DATA before any PARAMETER");
    expect_error("DATA before REGION", "PARAMETER x\nPOINTS 1\nDATA 1\n", T, 3,
                 "DATA before any REGION");
    expect_error("POINTS before PARAMETER", "POINTS 1 2\n", T, 1, "POINTS before any PARAMETER");
    expect_error("too many DATA lines",
                 "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", T, 6,
                 "more DATA lines than POINTS (2)");
    expect_error("too few DATA lines",
                 "PARAMETER x\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2\nREGION s\nDATA 1\nDATA 2\n"
                 "DATA 3\n",
                 T, 4, "has data for 2 of the 3 coordinates");
    expect_error("truncated text", "PARAMETER x\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2\nDA", T, 6,
                 "unknown field \"DA\"");
    expect_error("truncated DATA block", "PARAMETER x\nPOINTS 1 2 3\nREGION r\nDATA 1\nDATA 2", T,
                 4, "2 of the 3");
    expect_error("NaN in DATA", "PARAMETER x\nPOINTS 1 2\nREGION r\nDATA 1\nDATA nan\n", T, 5,
                 "\"nan\" is not a finite number");
    expect_error("inf in POINTS", "PARAMETER x\nPOINTS 1 inf\n", T, 2, "not a finite number");
    expect_error("overflow in DATA", "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1e999\n", T, 4,
                 "not a finite number");
    expect_error("word in DATA", "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1 abc\n", T, 4,
                 "expected a number in DATA, got \"abc\"");
    expect_error("hex in DATA", "PARAMETER x\nPOINTS 1\nREGION r\nDATA 0x10\n", T, 4,
                 "expected a number");
    expect_error("empty DATA", "PARAMETER x\nPOINTS 1\nREGION r\nDATA\n", T, 4,
                 "DATA without values");
    expect_error("five parameters", "PARAMETER a b c d e\n", T, 1, "at most 4 parameters");
    expect_error("duplicate parameter", "PARAMETER x\nPARAMETER x\n", T, 2,
                 "parameter \"x\" is given twice");
    expect_error("duplicate point", "PARAMETER x\nPOINTS 1 2 1\n", T, 2, "point (1) is listed twice");
    expect_error("point with too few values", "PARAMETER x y\nPOINTS (1 2) (3)\n", T, 2,
                 "has 1 values, expected 2");
    expect_error("unclosed point", "PARAMETER x y\nPOINTS (1 2) (3 4\n", T, 2, "missing its ')'");
    expect_error("bare points with 2 parameters", "PARAMETER x y\nPOINTS 1 2\n", T, 2,
                 "needs exactly one parameter");
    expect_error("POINTS after DATA",
                 "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nPOINTS 2\n", T, 5, "POINTS after DATA");
    expect_error("PARAMETER after POINTS", "PARAMETER x\nPOINTS 1\nPARAMETER y\n", T, 3,
                 "PARAMETER after POINTS");
    expect_error("series given twice",
                 "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nREGION s\nDATA 1\nREGION r\nDATA 2\n",
                 T, 8, "second block of DATA for region \"r\"");
    expect_error("leading whitespace", "PARAMETER x\n  POINTS 1\n", T, 2,
                 "whitespace before the field name");
    expect_error("invalid UTF-8", "PARAMETER x\nPOINTS 1\nREGION \xff\xfe\n", T, 3,
                 "not valid UTF-8");
    expect_error("METRIC after metric-less DATA",
                 "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nMETRIC time\nREGION s\nDATA 2\n", T, 5,
                 "METRIC after DATA that had no METRIC");
    expect_error("bare REGION at the end of the input",
                 "PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nREGION", T, 5,
                 "\"REGION\" ends the input without a value");
    check(read_text("PARAMETER x\nPOINTS 1\nREGION r\nDATA 1\nREGION\n", T, &e, &err) == 0,
          "REGION with an empty name before a line break reads (as in Extra-P): %s", err.msg);
    ingest_experiment_free(&e);
    expect_error("no measurements", "PARAMETER x\nPOINTS 1\nREGION r\nMETRIC m\n", T, 0,
                 "no measurements");
    expect_error("only parameters", "# just a comment\nPARAMETER x\n", T, 0, "no coordinates");

    /* Offsets point at the start of the faulty line; CRLF and lone CR end lines. */
    ingest_experiment e2;
    read_text("PARAMETER x\r\nPOINTS 1\rBAD\n", T, &e2, &err);
    check(err.line == 3 && err.offset == 22, "CRLF/CR line ends: line 3 at offset 22, got %ld/%ld",
          err.line, err.offset);

    /* Comments, blank lines, tabs, CRLF, multiple spaces in names. */
    const char *messy = "# comment\r\n\r\nPARAMETER\tx\r\nPOINTS ( 1 )(2)  ( 3 )\r\n"
                        "REGION  main   loop \r\nDATA 1e3\t+2 .5 5.\r\nDATA -1E-2\r\nDATA 0\r\n";
    if (read_text(messy, T, &e, &err) == 0) {
        check(strcmp(e.callpaths[0], "main loop") == 0, "whitespace runs in names become one space");
        check(e.ncoords == 3 && coord_at(&e, 2, 0) == 3, "POINTS with mixed spacing");
        const ingest_series *s = &e.series[0];
        check(nvalues_at(s, 0) == 4 && s->values[0] == 1000 && s->values[1] == 2 &&
                  s->values[2] == 0.5 && s->values[3] == 5 && s->values[4] == -0.01,
              "number spellings 1e3 +2 .5 5. -1E-2");
        ingest_experiment_free(&e);
    } else {
        check(0, "messy text input: %s", err.msg);
    }
}

static void test_json_errors(void)
{
    ingest_format J = INGEST_FORMAT_EXTRAP_JSON;
    expect_error("empty JSON", "", J, 0, "input is empty");
    expect_error("truncated JSON", "{\"parameters\": [\"x\"],\n\"measurements\": {\"a\":", J, 2,
                 "invalid JSON");
    expect_error("truncated JSON at a line start", "{\n\"parameters\": [\"x\"],\n", J, 3,
                 "invalid JSON");
    expect_error("JSON NaN", "{\"parameters\":[\"x\"],\n\"measurements\":{\"a\":{\"t\":"
                             "[{\"point\":[1],\"values\":[NaN]}]}}}",
                 J, 2, "invalid JSON");
    expect_error("JSON top-level array", "[1, 2]", J, 0, "expected a JSON object");
    expect_error("parameters not an array", "{\"parameters\": \"x\", \"measurements\": {}}", J, 0,
                 "\"parameters\": expected an array");
    expect_error("missing measurements", "{\"parameters\": [\"x\"]}", J, 0,
                 "missing \"measurements\"");
    expect_error("value not a number",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":"
                 "[{\"point\":[1],\"values\":[1, \"2\"]}]}}}",
                 J, 0, "measurements[\"a\"][\"t\"][0].values[1]: expected a number");
    expect_error("point of wrong size",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":"
                 "[{\"point\":[1, 2],\"values\":[1]}]}}}",
                 J, 0, ".point has 2 values, expected 1");
    expect_error("point twice in a list",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":"
                 "[{\"point\":[1],\"values\":[1]},{\"point\":[1],\"values\":[2]}]}}}",
                 J, 0, "point (1) appears twice");
    expect_error("duplicate key",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":[]},\"a\":{}}}", J, 1,
                 "duplicate object key");
    expect_error("empty values",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":"
                 "[{\"point\":[1],\"values\":[]}]}}}",
                 J, 0, "has no values at (1)");
    expect_error("missing point",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":[{\"values\":[1]}]}}}", J,
                 0, "missing \"point\"");
    expect_error("real overflow",
                 "{\"parameters\":[\"x\"],\"measurements\":{\"a\":{\"t\":"
                 "[{\"point\":[1],\"values\":[1e400]}]}}}",
                 J, 1, "invalid JSON");

    const char *legacy_head = "{\"parameters\":[{\"id\":1,\"name\":\"x\"}],"
                              "\"callpaths\":[{\"id\":1,\"name\":\"a\"}],"
                              "\"metrics\":[{\"id\":1,\"name\":\"t\"}],"
                              "\"coordinates\":[{\"id\":1,\"parameter_value_pairs\":"
                              "[{\"parameter_id\":1,\"parameter_value\":4}]}],";
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s\"measurements\":[{\"coordinate_id\":2,\"callpath_id\":1,"
                               "\"metric_id\":1,\"value\":1}]}",
             legacy_head);
    expect_error("legacy coordinate id out of range", buf, J, 0,
                 "measurements[0].coordinate_id: expected an integer from 1 to 1");
    snprintf(buf, sizeof(buf), "%s\"measurements\":[{\"coordinate_id\":1,\"callpath_id\":1,"
                               "\"metric_id\":1,\"value\":true}]}",
             legacy_head);
    expect_error("legacy value boolean", buf, J, 0, "measurements[0].value: expected a finite number");
    snprintf(buf, sizeof(buf), "%s\"measurements\":[{\"coordinate_id\":1,\"callpath_id\":1,"
                               "\"metric_id\":1,\"value\":\"nan\"}]}",
             legacy_head);
    expect_error("legacy value nan string", buf, J, 0, "expected a finite number");
    snprintf(buf, sizeof(buf), "%s\"measurements\":[{\"coordinate_id\":1,\"callpath_id\":1,"
                               "\"metric_id\":1,\"value\":\"2.5\"}]}",
             legacy_head);
    ingest_experiment e;
    ingest_error err;
    check(read_text(buf, J, &e, &err) == 0, "legacy value as a numeric string (Extra-P float()): %s",
          err.msg);
    if (e.nseries == 1)
        check(e.series[0].values[0] == 2.5, "legacy string value 2.5");
    ingest_experiment_free(&e);
    expect_error("legacy ids not 1..n",
                 "{\"parameters\":[{\"id\":1,\"name\":\"x\"}],\"callpaths\":[{\"id\":2,\"name\":\"a\"}],"
                 "\"metrics\":[],\"coordinates\":[],\"measurements\":[]}",
                 J, 0, "callpaths[0].id: expected an integer from 1 to 1");
    expect_error("legacy duplicate callpath",
                 "{\"parameters\":[{\"id\":1,\"name\":\"x\"}],\"callpaths\":[{\"id\":1,\"name\":\"a\"},"
                 "{\"id\":2,\"name\":\"a\"}],\"metrics\":[],\"coordinates\":[],\"measurements\":[]}",
                 J, 0, "name \"a\" is used twice");
}

static void test_line_errors(void)
{
    ingest_format L = INGEST_FORMAT_EXTRAP_JSONL;
    ingest_format P = INGEST_FORMAT_TALPAS;
    const char *ok = "{\"params\":{\"x\":1},\"value\":1}\n";
    char buf[1024];

    expect_error("empty JSON Lines", "\n\n", L, 0, "input is empty");
    snprintf(buf, sizeof(buf), "%s%s\n%s{\"params\":{\"x\":2},\"value\":\"abc\"}\n", ok, ok, ok);
    expect_error("string value after a blank line", buf, L, 5, "expected a number in \"value\"");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"value\":[1, null]}\n", ok);
    expect_error("null in value list", buf, L, 2, "expected a number in \"value\"[1]");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"value\":NaN}\n", ok);
    expect_error("NaN value", buf, L, 2, "invalid JSON");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"value\":1", ok);
    expect_error("truncated line", buf, L, 2, "invalid JSON");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"y\":2},\"value\":1}\n", ok);
    expect_error("missing parameter", buf, L, 2, "missing parameter \"x\"");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2,\"y\":3},\"value\":1}\n", ok);
    expect_error("extra parameter", buf, L, 2, "unknown parameter \"y\"");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":\"2\"},\"value\":1}\n", ok);
    expect_error("parameter value a string", buf, L, 2, "expected a number for parameter \"x\"");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2}}\n", ok);
    expect_error("missing value", buf, L, 2, "missing \"value\"");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"callpath\":7,\"value\":1}\n", ok);
    expect_error("callpath a number", buf, L, 2, "expected a string in \"callpath\"");
    snprintf(buf, sizeof(buf), "%s[1]\n", ok);
    expect_error("array line", buf, L, 2, "expected a JSON object");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"value\":1,\"value\":2}\n", ok);
    expect_error("duplicate key in a line", buf, L, 2, "duplicate object key");
    ingest_experiment e;
    ingest_error err;
    check(read_text("{\"params\":{\"x\":1},\"value\":100000000000000000000}", L, &e, &err) == 0,
          "an integer beyond long long reads as Python reads it: %s", err.msg);
    if (e.nseries == 1)
        check(e.series[0].values[0] == 1e20, "100000000000000000000 is 1e20");
    ingest_experiment_free(&e);

    expect_error("empty params", "{\"params\":{},\"value\":1}\n", L, 1, "\"params\" is empty");
    snprintf(buf, sizeof(buf), "%s{\"params\":{\"x\":2},\"value\":1}\n"
                               "{\"params\":{\"x\":2},\"callpath\":\"b\",\"value\":1}\n", ok);
    expect_error("incomplete series", buf, L, 3, "\"b\", metric \"<default>\" has data for 1 of the 2");

    expect_error("TaLPas missing metric",
                 "{\"parameters\":{\"x\":1};\"callpath\":\"a\";\"value\":1}\n", P, 1,
                 "missing \"metric\"");
    expect_error("TaLPas missing callpath",
                 "{\"parameters\":{\"x\":1};\"metric\":\"a\";\"value\":1}\n", P, 1,
                 "missing \"callpath\"");
    expect_error("TaLPas truncated",
                 "{\"parameters\":{\"x\":1};\"metric\":\"t\";\"callpath\":\"a\";\"value\":1}\n"
                 "{\"parameters\":{\"x\":1};\"metric\":\"t\";\"callp",
                 P, 2, "invalid JSON");
    expect_error("TaLPas params key", "{\"params\":{\"x\":1};\"metric\":\"t\";\"callpath\":\"a\";"
                                      "\"value\":1}\n",
                 P, 1, "missing \"parameters\"");
}

/* A buffer cut at every length must fail cleanly or succeed, never overrun. */
static void test_every_prefix(const char *name, ingest_format fmt)
{
    char path[512];
    size_t len = 0;
    snprintf(path, sizeof(path), INPUTS "%s", name);
    char *buf = load_file(path, &len);
    check(buf != NULL, "load %s", name);
    if (!buf)
        return;
    int ok = 1, successes = 0;
    for (size_t n = 0; n <= len; n++) {
        char *cut = exact_copy(buf, n);
        ingest_experiment e;
        ingest_error err;
        int rc = ingest_extrap_read(cut, n, fmt, &e, &err);
        if (rc == 0) {
            successes++;
            if (!well_formed(&e))
                ok = 0;
            ingest_experiment_free(&e);
        } else if (!is_zeroed(&e) || err.msg[0] == '\0') {
            ok = 0;
        }
        free(cut);
    }
    free(buf);
    check(ok, "%s: every prefix reads cleanly or fails with a message", name);
    check(successes >= 1, "%s: the whole file reads", name);
}

int main(void)
{
    test_one_parameter_1();
    test_text_layouts();
    test_json_layouts();
    test_line_formats();
    test_all_fixtures();
    test_format_detection();
    test_text_errors();
    test_json_errors();
    test_line_errors();
    test_every_prefix("one_parameter_6.txt", INGEST_FORMAT_EXTRAP_TEXT);
    test_every_prefix("input1.json", INGEST_FORMAT_EXTRAP_JSON);
    test_every_prefix("extended2.jsonl", INGEST_FORMAT_EXTRAP_JSONL);
    test_every_prefix("talpas_1.txt", INGEST_FORMAT_TALPAS);
    return check_summary();
}
