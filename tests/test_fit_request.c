/*
 * test_fit_request.c — models for points a caller sends
 * (analysis/fit_request.h), without a server: the input's format named or
 * recognized, a model fitted on exact data predicting what the function
 * gives, and each fault of perfcast's document answered with its status and
 * the member it is about.
 */
#include <math.h>
#include <string.h>

#include "analysis/fit_request.h"
#include "tests/check.h"

static json_t *fit_text(const char *text, const char *modeler, an_problem *p)
{
    json_t *doc = json_loads(text, 0, NULL);
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_DEFAULT;
    char err[256];
    if (modeler)
        pmnf_options_apply(&o, "modeler", modeler, err, sizeof err);
    json_t *out = doc ? fit_request_perfcast(doc, &o, p) : NULL;
    json_decref(doc);
    return out;
}

static void test_format(void)
{
    ingest_format f;
    int pc;
    an_problem p;
    const char *own = "{\"parameters\":[\"x\"],\"points\":[]}";
    check(fit_request_format(NULL, own, strlen(own), &f, &pc, &p) == 0 && pc == 1,
          "a JSON object with points is perfcast's");
    const char *ej = "{\"parameters\":[\"x\"],\"points\":[1],\"measurements\":{}}";
    check(fit_request_format(NULL, ej, strlen(ej), &f, &pc, &p) == 0 && !pc &&
              f == INGEST_FORMAT_EXTRAP_JSON,
          "points with measurements is Extra-P's JSON");
    const char *tal = "{\"params\": {\"x\": 1}; \"metric\": 2}\n";
    check(fit_request_format(NULL, tal, strlen(tal), &f, &pc, &p) == 0 &&
              f == INGEST_FORMAT_TALPAS,
          "a ';' on the first line of an object is TaLPas");
    const char *txt = "PARAMETER x\n";
    check(fit_request_format(NULL, txt, strlen(txt), &f, &pc, &p) == 0 &&
              f == INGEST_FORMAT_EXTRAP_TEXT,
          "text");
    check(fit_request_format("extrap-jsonl", txt, strlen(txt), &f, &pc, &p) == 0 &&
              f == INGEST_FORMAT_EXTRAP_JSONL,
          "a named format wins over the bytes");
    check(fit_request_format("csv", txt, strlen(txt), &f, &pc, &p) < 0 && p.status == 415 &&
              !strcmp(p.field, "format") && strstr(p.msg, "\"csv\""),
          "unknown format: 415 naming format, got %d %s", p.status, p.field);
}

/* y = 2 + 3x measured exactly at x = 1..8: the model's prediction at 64 is
 * 194 up to the fit's rounding (relative 1e-6 is far above it). */
static void test_exact_linear(void)
{
    an_problem p;
    json_t *out = fit_text("{\"parameters\":[\"x\"],\"points\":["
                           "{\"point\":[1],\"values\":[5,5]},{\"point\":[2],\"values\":[8,8]},"
                           "{\"point\":[3],\"values\":[11]},{\"point\":[4],\"values\":[14]},"
                           "{\"point\":[5],\"values\":[17]},{\"point\":[6],\"values\":[20]},"
                           "{\"point\":[7],\"values\":[23]},{\"point\":[8],\"values\":[26]}],"
                           "\"predict\":[[64],[2]],\"modeler\":\"extrap\"}",
                           NULL, &p);
    check(out != NULL, "fit: %s", out ? "" : p.msg);
    json_t *m = json_array_get(json_object_get(out, "models"), 0);
    check(!strcmp(json_string_value(json_object_get(m, "callpath")), "<root>") &&
              !strcmp(json_string_value(json_object_get(m, "metric")), "<default>"),
          "default callpath and metric");
    json_t *pred = json_object_get(m, "predictions");
    double v64 = json_number_value(json_object_get(json_array_get(pred, 0), "value"));
    double v2 = json_number_value(json_object_get(json_array_get(pred, 1), "value"));
    check(check_close(v64, 194, 1e-6, 1) && check_close(v2, 8, 1e-6, 1),
          "predictions 194 and 8, got %g and %g", v64, v2);
    check(json_number_value(json_array_get(
              json_object_get(json_array_get(pred, 0), "point"), 0)) == 64,
          "the point echoed");
    json_decref(out);
}

static void expect(const char *doc, int status, const char *field, const char *what)
{
    an_problem p = {0};
    json_t *out = fit_text(doc, NULL, &p);
    check(!out && p.status == status && !strcmp(p.field, field),
          "%s: want %d %s, got %d \"%s\" (%s)", what, status, field, p.status, p.field, p.msg);
    json_decref(out);
}

static void test_faults(void)
{
    expect("{\"points\":[]}", 400, "parameters", "no parameters");
    expect("{\"parameters\":[\"\"],\"points\":[]}", 400, "parameters", "an empty name");
    expect("{\"parameters\":[\"x\"],\"points\":[]}", 400, "points", "no points");
    expect("{\"parameters\":[\"x\"],\"points\":[{\"point\":[1],\"values\":[1]},"
           "{\"point\":[1,2],\"values\":[1]}]}",
           400, "points[1].point", "a point of two coordinates");
    expect("{\"parameters\":[\"x\"],\"points\":[{\"point\":[1],\"values\":[1e300]}]}", 400,
           "points[0].values", "a value beyond the modeler's range");
    expect("{\"parameters\":[\"x\"],\"points\":[{\"point\":[1],\"values\":[]}]}", 400,
           "points[0].values", "no values");
    expect("{\"parameters\":[\"x\"],\"measure\":\"mode\",\"points\":[]}", 400, "measure",
           "an unknown measure");
    expect("{\"parameters\":[\"x\"],\"modeler\":\"guess\",\"points\":[]}", 400, "modeler",
           "an unknown modeler");
    expect("{\"parameters\":[\"x\"],\"options\":{\"no_such_option\":1},\"points\":[]}", 400,
           "options.no_such_option", "an unknown option");
    expect("{\"parameters\":[\"x\"],\"options\":{\"modeler\":\"extrap\"},\"points\":[]}", 400,
           "options.modeler", "the modeler among the options");
    expect("{\"parameters\":[\"x\"],\"points\":[{\"point\":[1],\"values\":[1]},"
           "{\"point\":[2],\"values\":[2]},{\"point\":[3],\"values\":[3]},"
           "{\"point\":[4],\"values\":[4]},{\"point\":[5],\"values\":[5]}],"
           "\"predict\":[[1,2]]}",
           400, "predict[0]", "a prediction point of two coordinates");
    an_problem p = {0};
    json_t *out = fit_text("{\"parameters\":[\"x\"],\"points\":[{\"point\":[1],\"values\":"
                           "[1e300]}]}",
                           NULL, &p);
    check(!out && strstr(p.msg, "item 0 is 1e+300") && strstr(p.msg, "beyond"),
          "the limit named: %s", p.msg);
}

/* An Extra-P text input: one model per series, a file the reader refuses
 * is 400 "body". */
static void test_extrap(void)
{
    const char *text = "PARAMETER p\n\nPOINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 )\n\n"
                       "REGION r\nMETRIC time\n"
                       "DATA 2 2\nDATA 4 4\nDATA 8 8\nDATA 16 16\nDATA 32 32\n";
    pmnf_options o;
    pmnf_options_default(&o);
    char err[256];
    pmnf_options_apply(&o, "modeler", "extrap", err, sizeof err);
    an_problem p = {0};
    json_t *out = fit_request_extrap(text, strlen(text), INGEST_FORMAT_EXTRAP_TEXT, &o, &p);
    json_t *m = json_array_get(json_object_get(out, "models"), 0);
    check(out && json_array_size(json_object_get(out, "models")) == 1 &&
              !strcmp(json_string_value(json_object_get(m, "callpath")), "r") &&
              !strcmp(json_string_value(json_object_get(m, "metric")), "time"),
          "one model for r;time: %s", out ? "" : p.msg);
    json_decref(out);
    const char *bad = "PARAMETER p\nPOINTS ( 2 )\nDATA x\n";
    out = fit_request_extrap(bad, strlen(bad), INGEST_FORMAT_EXTRAP_TEXT, &o, &p);
    check(!out && p.status == 400 && !strcmp(p.field, "body"), "bad text: %d %s", p.status,
          p.field);
    json_decref(out);
}

int main(void)
{
    test_format();
    test_exact_linear();
    test_faults();
    test_extrap();
    return check_summary();
}
