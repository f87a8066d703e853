/*
 * cmd_model.c — `perfcast model FILE`: Extra-P's command line modeling,
 * offline. Reads an Extra-P input file (ingest/extrap.h), fits one model per
 * (callpath, metric) with one shared modeler (modeling/modeler.h; each series
 * fitted by analysis/fit_request.h as POST /v1/fit fits it), and prints
 * `callpath;metric;model` lines in Extra-P's syntax, or one JSON object per
 * line with --json. The modeler is the robust one (modeling/robust.c, which
 * sees every repetition instead of their mean) unless --modeler extrap asks
 * for Extra-P's. Each model's coded warnings (modeling/assess.h) go to
 * stderr as "warning: callpath;metric: code: message" lines, and into the
 * objects of --json; --predict adds predictions with their own warnings;
 * --strict exits 3 when any model or prediction carries a warning.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fit_request.h"
#include "modeling/model_json.h"
#include "modeling/warning_json.h"
#include "ingest/extrap.h"
#include "ingest/extrap_exp.h"
#include "modeling/modeler.h"
#include "server/commands.h"

typedef struct model_args {
    const char *path;
    ingest_format format;
    pmnf_options opt;
    int json;
    int diagnostics;
    int strict;
    int npredict;
    double predict[16][PMNF_MAX_PARAMS];
    const char *predict_text[16];
    const char *save; /* --save FILE.extra-p */
} model_args;

static const char model_usage_text[] =
    "usage: perfcast model FILE|DIR [--format extrap-text|extrap-json|extrap-jsonl|talpas]\n"
    "                           [--measure mean|median] [--modeler robust|extrap|segmented]\n"
    "                           [--options KEY=VALUE ...] [--json]\n"
    "                           [--predict NAME=VALUE[,NAME=VALUE...] ...] [--strict] [--diagnostics]\n"
    "                           [--save FILE.extra-p]\n"
    "Fits a PMNF model per (callpath, metric) of an Extra-P input file (\"-\": stdin), an\n"
    "Extra-P experiment (.extra-p: the models stored in it are reported on stderr) or a\n"
    "Score-P Cube profile set (DIR/mm.x10y1z1.r1/profile.cubex, ...) and\n"
    "prints 'callpath;metric;model' lines, or one JSON object per line with --json.\n"
    "The modeler is robust unless --modeler extrap. --predict adds a line\n"
    "'callpath;metric;NAME=VALUE,...;value;lo;hi' per point (\"predictions\" with --json).\n"
    "Warnings go to stderr as 'warning: callpath;metric: code: message' (objects in\n"
    "--json); with --strict any warning makes the exit status 3. --diagnostics adds a line\n"
    "'callpath;metric;diagnostics;smape=..;adjusted_r2=..;rss=..;cross_validated_smape=..;\n"
    "NAME=MIN..MAX/DISTINCT...' after each model (always in \"diagnostics\" with --json).\n"
    "--save writes the measurements as an Extra-P experiment.\n";

static int model_usage(const char *msg)
{
    fprintf(stderr, "perfcast model: %s\n", msg);
    fputs(model_usage_text, stderr);
    return 2;
}

static int parse_option(pmnf_options *o, const char *kv)
{
    char key[128], err[256];
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key) {
        fprintf(stderr, "perfcast model: option \"%s\" is not KEY=VALUE\n", kv);
        return -1;
    }
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    if (pmnf_options_apply(o, key, eq + 1, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast model: %s\n", err);
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, model_args *a)
{
    memset(a, 0, sizeof *a);
    pmnf_options_default(&a->opt);
    a->opt.modeler = PMNF_MODELER_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if ((!strcmp(s, "--format") || !strcmp(s, "--measure") || !strcmp(s, "--modeler") ||
             !strcmp(s, "--predict")) && i + 1 >= argc) {
            fprintf(stderr, "perfcast model: %s needs a value (%s)\n", s,
                    s[2] == 'f'   ? "extrap-text, extrap-json, extrap-jsonl or talpas"
                    : s[3] == 'e' ? "mean or median"
                    : s[3] == 'o' ? "robust, extrap or segmented"
                                  : "NAME=VALUE[,NAME=VALUE...]");
            return 2;
        }
        if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--save")) {
            if (i + 1 >= argc)
                return model_usage("--save needs a FILE.extra-p");
            a->save = argv[++i];
        } else if (!strcmp(s, "--diagnostics")) {
            a->diagnostics = 1;
        } else if (!strcmp(s, "--strict")) {
            a->strict = 1;
        } else if (!strcmp(s, "--predict")) {
            if (a->npredict == 16)
                return model_usage("at most 16 --predict points");
            a->predict_text[a->npredict++] = argv[++i];
        } else if (!strcmp(s, "--format") && i + 1 < argc) {
            a->format = ingest_extrap_format_from_name(argv[++i]);
            if (a->format == INGEST_FORMAT_UNKNOWN)
                return model_usage("--format must be extrap-text, extrap-json, extrap-jsonl or "
                                   "talpas (text, json, jsonl: the same, older names)");
        } else if (!strcmp(s, "--measure") && i + 1 < argc) {
            char err[256];
            if (pmnf_options_set(&a->opt, "measure", argv[++i], err, sizeof err) < 0)
                return model_usage("--measure must be mean or median");
        } else if (!strcmp(s, "--modeler") && i + 1 < argc) {
            char err[256];
            if (pmnf_options_apply(&a->opt, "modeler", argv[i + 1], err, sizeof err) < 0) {
                fprintf(stderr, "perfcast model: --modeler: unknown modeler \"%s\" (robust, "
                                "extrap, segmented)\n", argv[i + 1]);
                return 2;
            }
            i++;
        } else if (!strcmp(s, "--options")) {
            if (i + 1 >= argc || !strchr(argv[i + 1], '='))
                return model_usage("--options needs KEY=VALUE arguments");
            while (i + 1 < argc && argv[i + 1][0] != '-' && strchr(argv[i + 1], '='))
                if (parse_option(&a->opt, argv[++i]) < 0)
                    return 2;
        } else if (s[0] == '-' && s[1] != '\0') {
            fprintf(stderr, "perfcast model: unknown flag %s\n", s);
            return 2;
        } else if (!a->path) {
            a->path = s;
        } else {
            return model_usage("only one FILE");
        }
    }
    if (!a->path)
        return model_usage("FILE is missing");
    char err[256];
    const char *bad;
    if (pmnf_options_check(&a->opt, &bad, err, sizeof err) < 0)
        return model_usage(err);
    return 0;
}

/* The points of --predict, once the file has named the parameters:
 * "x=120" or "p=64,n=1000" ("x:120" too, as the API's at= writes it), every
 * parameter once, each a finite number > 0. */
static int parse_points(const ingest_experiment *e, model_args *a)
{
    for (int k = 0; k < a->npredict; k++) {
        int seen[PMNF_MAX_PARAMS] = {0};
        const char *p = a->predict_text[k];
        while (*p) {
            const char *comma = strchrnul(p, ','), *colon = p;
            while (colon < comma && *colon != '=' && *colon != ':')
                colon++;
            if (colon == comma)
                colon = NULL;
            int which = -1;
            for (int i = 0; colon && colon < comma && i < e->nparams; i++)
                if (strlen(e->params[i]) == (size_t)(colon - p) &&
                    !memcmp(e->params[i], p, (size_t)(colon - p)))
                    which = i;
            char *end = NULL;
            double v = which >= 0 ? strtod(colon + 1, &end) : 0;
            if (which < 0 || end != comma || !(v > 0) || v > 1e300 || seen[which]++) {
                fprintf(stderr, "perfcast model: --predict \"%s\": each parameter of the file "
                                "once as NAME=VALUE, VALUE > 0\n",
                        a->predict_text[k]);
                return -1;
            }
            a->predict[k][which] = v;
            p = *comma ? comma + 1 : comma;
        }
        for (int i = 0; i < e->nparams; i++)
            if (!seen[i]) {
                fprintf(stderr, "perfcast model: --predict \"%s\": %s is missing\n",
                        a->predict_text[k], e->params[i]);
                return -1;
            }
    }
    return 0;
}

/* The predictions of --predict, each with its warnings. */
static json_t *predictions_json(const ingest_experiment *e, const pmnf_model *m,
                                const model_args *a)
{
    json_t *list = json_array();
    for (int k = 0; list && k < a->npredict; k++) {
        double v, lo, hi;
        int none = pmnf_predict(m, a->predict[k], &v, &lo, &hi);
        json_t *point = json_object(), *w = json_array();
        for (int i = 0; point && i < e->nparams; i++)
            json_object_set_new(point, e->params[i], json_real(a->predict[k][i]));
        pmnf_point_warnings_json(w, m, a->predict[k], (const char *const *)e->params, NULL);
        json_array_append_new(list, json_pack("{s:o, s:o, s:o, s:o}", "point", point, "value",
                                              isfinite(v) ? json_real(v) : json_null(),
                                              "interval",
                                              none ? json_null() : json_pack("[f, f]", lo, hi),
                                              "warnings", w));
    }
    return list;
}

/* The model as `perfcast model --json` prints it: the API's model document
 * (api/model_json.h) with the callpath and metric first, and the
 * predictions of --predict. */
static json_t *model_json(const ingest_experiment *e, const ingest_series *s, const pmnf_model *m,
                          const model_args *a)
{
    json_t *doc = api_model_to_json(m, (const char *const *)e->params, 0);
    json_t *o = json_pack("{s:s, s:s}", "callpath", e->callpaths[s->callpath], "metric",
                          e->metrics[s->metric]);
    if (!doc || !o) {
        json_decref(doc);
        json_decref(o);
        return NULL;
    }
    json_object_update(o, doc);
    json_decref(doc);
    if (a->npredict)
        json_object_set_new(o, "predictions", predictions_json(e, m, a));
    return o;
}

/* "warning: callpath;metric[ at x=120]: code: message" lines on stderr for
 * the warnings in arr; returns how many. */
static int print_warnings(const ingest_experiment *e, const ingest_series *s, const json_t *arr,
                          const char *where)
{
    size_t i;
    const json_t *w;
    if (json_array_size(arr))
        fflush(stdout); /* after the line it is about, also when both go to one file */
    json_array_foreach(arr, i, w)
        fprintf(stderr, "perfcast model: warning: %s;%s%s%s: %s: %s\n", e->callpaths[s->callpath],
                e->metrics[s->metric], where ? " at " : "", where ? where : "",
                json_string_value(json_object_get(w, "code")),
                json_string_value(json_object_get(w, "message")));
    return (int)json_array_size(arr);
}

/* The --diagnostics line of a model (modeling/assess.h). */
static void print_diagnostics(const ingest_experiment *e, const ingest_series *s,
                              const pmnf_model *m)
{
    printf("%s;%s;diagnostics;smape=%.17g;adjusted_r2=%.17g;rss=%.17g;cross_validated_smape=%.17g",
           e->callpaths[s->callpath], e->metrics[s->metric], m->smape, m->ar2, m->rss,
           m->diag.loo_smape);
    for (int p = 0; m->diag.known && p < e->nparams; p++)
        printf(";%s=%.17g..%.17g/%d", e->params[p], m->diag.lo[p], m->diag.hi[p],
               m->diag.distinct[p]);
    putchar('\n');
}

/* The model's text into *text: Extra-P's syntax, a segmented model as
 * Extra-P prints its segments ("f for p<=6.0, g for p>=6.0") on one line. */
static int format_model(const ingest_experiment *e, const pmnf_model *m, char **text,
                        size_t *text_cap)
{
    const char *const *names = (const char *const *)e->params;
    size_t need = pmnf_format(&m->f, names, NULL, 0) + 1;
    if (m->nsegments == 2)
        need += pmnf_format(&m->f2, names, NULL, 0) + 2 * strlen(names[0]) + 80;
    if (need > *text_cap) {
        char *t = realloc(*text, need);
        if (!t)
            return -1;
        *text = t;
        *text_cap = need;
    }
    size_t n = pmnf_format(&m->f, names, *text, *text_cap);
    if (m->nsegments == 2) {
        char lo[32], hi[32];
        pmnf_format_double(m->break_lo, lo);
        pmnf_format_double(m->break_hi, hi);
        n += (size_t)snprintf(*text + n, *text_cap - n, " for %s<=%s, ", names[0], lo);
        n += pmnf_format(&m->f2, names, *text + n, *text_cap - n);
        snprintf(*text + n, *text_cap - n, " for %s>=%s", names[0], hi);
    }
    return 0;
}

/* Prints one model (and its predictions); *nwarn counts the warnings. */
static int print_model(const ingest_experiment *e, const ingest_series *s, const pmnf_model *m,
                       const model_args *a, char **text, size_t *text_cap, int *nwarn)
{
    size_t k;
    const json_t *p;
    if (a->json) {
        json_t *o = model_json(e, s, m, a);
        if (!o)
            return -1;
        *nwarn += (int)json_array_size(json_object_get(o, "warnings"));
        json_array_foreach(json_object_get(o, "predictions"), k, p)
            *nwarn += (int)json_array_size(json_object_get(p, "warnings"));
        json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
        putchar('\n');
        json_decref(o);
        return 0;
    }
    if (format_model(e, m, text, text_cap) < 0)
        return -1;
    printf("%s;%s;%s\n", e->callpaths[s->callpath], e->metrics[s->metric], *text);
    if (a->diagnostics)
        print_diagnostics(e, s, m);
    /* JSON only for what there is to say: text mode stays as fast as Extra-P's lines */
    if (m->warnings) {
        json_t *w = pmnf_warnings_json(m, (const char *const *)e->params, NULL);
        if (!w)
            return -1;
        *nwarn += print_warnings(e, s, w, NULL);
        json_decref(w);
    }
    json_t *preds = a->npredict ? predictions_json(e, m, a) : NULL;
    if (a->npredict && !preds)
        return -1;
    json_array_foreach(preds, k, p)
    {
        char where[512];
        size_t n = 0;
        where[0] = '\0';
        for (int i = 0; i < e->nparams && n < sizeof where; i++)
            n += (size_t)snprintf(where + n, sizeof where - n, "%s%s=%.17g", i ? "," : "",
                                  e->params[i], a->predict[k][i]);
        const json_t *iv = json_object_get(p, "interval"), *v = json_object_get(p, "value");
        int has = json_is_array(iv);
        printf("%s;%s;%s;%.17g;%.17g;%.17g\n", e->callpaths[s->callpath], e->metrics[s->metric],
               where, json_is_number(v) ? json_number_value(v) : NAN,
               has ? json_number_value(json_array_get(iv, 0)) : NAN,
               has ? json_number_value(json_array_get(iv, 1)) : NAN);
        *nwarn += print_warnings(e, s, json_object_get(p, "warnings"), where);
    }
    json_decref(preds);
    return 0;
}

static int model_all(const ingest_experiment *e, const model_args *a)
{
    pmnf_modeler *m = pmnf_modeler_new(&a->opt);
    fit_series_buf b = {0};
    char *text = NULL;
    size_t text_cap = 0;
    int rc = m ? 0 : 1, nwarn = 0;
    for (int i = 0; i < e->nseries && rc == 0; i++) {
        const ingest_series *s = &e->series[i];
        pmnf_model model;
        char err[256];
        int fit = fit_series_model(m, e, s, a->opt.measure, &b, &model, err, sizeof err);
        if (fit == -1) {
            rc = 1;
        } else if (fit == -2) {
            fprintf(stderr, "perfcast model: %s;%s: %s\n", e->callpaths[s->callpath],
                    e->metrics[s->metric], err);
            rc = 2;
        } else if (print_model(e, s, &model, a, &text, &text_cap, &nwarn) < 0) {
            rc = 1;
        }
    }
    free(text);
    fit_series_buf_free(&b);
    pmnf_modeler_free(m);
    if (rc == 0 && a->strict && nwarn) {
        fprintf(stderr, "perfcast model: --strict: %d warning%s\n", nwarn, nwarn == 1 ? "" : "s");
        rc = 3;
    }
    return rc;
}

/* The measurements of e as an Extra-P experiment in path. 0, or 1 (said). */
static int save_experiment(const ingest_experiment *e, const char *path)
{
    json_t *doc = ingest_extrap_exp_json(e);
    unsigned char *zip = NULL;
    size_t len = 0;
    char err[256] = "out of memory";
    int rc = doc && ingest_extrap_exp_zip(doc, &zip, &len, err, sizeof err) == 0 ? 0 : 1;
    json_decref(doc);
    FILE *f = rc ? NULL : fopen(path, "wb");
    if (!rc && (!f || fwrite(zip, 1, len, f) != len)) {
        snprintf(err, sizeof err, "cannot write");
        rc = 1;
    }
    if (f && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "perfcast model: %s: %s\n", path, err);
    free(zip);
    return rc;
}

/* Extra-P's stored models, one stderr line each. */
static void report_stored(const ingest_experiment *e, json_t *doc)
{
    const char *ver = json_string_value(json_object_get(doc, "Extra-P"));
    size_t i;
    json_t *mg;
    json_array_foreach(json_object_get(doc, "modelers"), i, mg) {
        const char *name = json_string_value(json_object_get(mg, "name"));
        const char *cp;
        json_t *by;
        json_object_foreach(json_object_get(mg, "models"), cp, by) {
            const char *metric;
            json_t *m;
            json_object_foreach(by, metric, m) {
                char err[200];
                json_t *fn = json_object_get(json_object_get(m, "hypothesis"), "function");
                char *text = ingest_extrap_exp_model_text(fn, e, err, sizeof err);
                if (text)
                    fprintf(stderr, "perfcast model: stored by Extra-P %s (%s): %s;%s;%s\n",
                            ver ? ver : "?", name ? name : "?", cp, metric, text);
                else
                    fprintf(stderr,
                            "perfcast model: stored by Extra-P %s (%s): %s;%s: not read: %s\n",
                            ver ? ver : "?", name ? name : "?", cp, metric, err);
                free(text);
            }
        }
    }
}

/* Models e (which it frees), prints the models, saves when asked. */
static int model_and_save(ingest_experiment *e, model_args *a)
{
    if (parse_points(e, a) < 0) {
        ingest_experiment_free(e);
        return 2;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int rc = a->save ? save_experiment(e, a->save) : 0;
    if (!rc)
        rc = model_all(e, a);
    fflush(stdout);
    ingest_experiment_free(e);
    return rc;
}

int cmd_model(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(model_usage_text, stdout);
            return 0;
        }
    model_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    ingest_experiment e;
    char err[512];
    if (strcmp(a.path, "-") && cli_is_dir(a.path)) {
        char *skipped = NULL;
        if (cli_read_cube_set(a.path, &e, &skipped, err, sizeof err) < 0) {
            fprintf(stderr, "perfcast model: %s\n", err);
            return 2;
        }
        if (skipped)
            fprintf(stderr, "perfcast model: warning: metrics without data were skipped: %s\n",
                    skipped);
        free(skipped);
        return model_and_save(&e, &a);
    }
    cli_file in;
    if (cli_file_open(a.path, &in, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast model: %s\n", err);
        return 2;
    }
    size_t plen = strlen(a.path);
    if (!a.format && ((plen > 8 && !strcmp(a.path + plen - 8, ".extra-p")) ||
                      (in.len >= 4 && !memcmp(in.data, "PK\3\4", 4)))) {
        ingest_error xe;
        json_t *doc;
        if (ingest_extrap_exp_read(in.data, in.len, a.opt.measure == PMNF_MEASURE_MEDIAN, &e, &doc,
                                   &xe) < 0) {
            cli_file_close(&in);
            fprintf(stderr, "perfcast model: %s: %s\n", a.path, xe.msg);
            return 2;
        }
        cli_file_close(&in);
        report_stored(&e, doc);
        json_decref(doc);
        return model_and_save(&e, &a);
    }
    ingest_format fmt = a.format ? a.format : ingest_extrap_format_from_path(a.path, in.data, in.len);
    if (fmt == INGEST_FORMAT_UNKNOWN) {
        cli_file_close(&in);
        fprintf(stderr, "perfcast model: %s: cannot tell the format from the name; use --format\n",
                a.path);
        return 2;
    }
    ingest_error ie;
    if (ingest_extrap_read(in.data, in.len, fmt, &e, &ie) < 0) {
        cli_file_close(&in);
        /* the reader's message names the line or the JSON path itself */
        if (ie.line <= 0 && ie.offset > 0)
            fprintf(stderr, "perfcast model: %s: byte %ld: %s\n", a.path, ie.offset, ie.msg);
        else
            fprintf(stderr, "perfcast model: %s: %s\n", a.path, ie.msg);
        return 2;
    }
    cli_file_close(&in);
    return model_and_save(&e, &a);
}
