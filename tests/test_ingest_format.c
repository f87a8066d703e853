/*
 * test_ingest_format.c — format selection (ingest/format.c): what the first
 * bytes of an upload say it is (Kineto/Chrome JSON, gzip, Nsight Systems'
 * SQLite, perfcast's profile JSON, Extra-P text, JSON and JSON Lines,
 * Talpas), the format names and content types both ways, the Extra-P
 * inputs in tests/data sniffed from their first 4 KiB as their names say,
 * and ingest_read_profile refusing a format that is not a profile.
 */
#include <stdio.h>
#include <string.h>

#include "ingest/format.h"
#include "tests/check.h"

static void test_formats(void)
{
    struct {
        const char *text;
        ingest_kind want;
    } cases[] = {
        {"{\"traceEvents\":[]}", INGEST_KIND_KINETO},
        {"  {\"schemaVersion\": 1, \"deviceProperties\": [{\"ranks\": 1}]}", INGEST_KIND_KINETO},
        {"[{\"ph\":\"X\"}]", INGEST_KIND_KINETO},
        {"{\"point\":{\"ranks\":8},\"ranks\":[]}", INGEST_KIND_PERFCAST},
        {"{\"ranks\":[{\"rank\":0}]}", INGEST_KIND_PERFCAST},
        {"{\"parameters\":[\"x\"],\"measurements\":{}}", INGEST_KIND_EXTRAP_JSON},
        {"{\"callpaths\":[],\"coordinates\":[]}", INGEST_KIND_EXTRAP_JSON},
        {"{\"params\":{\"x\":4},\"metric\":\"m\",\"value\":1}\n", INGEST_KIND_EXTRAP_JSONL},
        {"{\"parameters\":{\"x\":20};\"metric\":\"time\";\"value\":1}\n", INGEST_KIND_TALPAS},
        {"PARAMETER x\n\nPOINTS ( 20 )\n", INGEST_KIND_EXTRAP_TEXT},
        {"SQLite format 3\0\x10\x00", INGEST_KIND_NSYS},
        {"\x1f\x8b\x08\x00", INGEST_KIND_KINETO},
        {"hello", INGEST_KIND_UNKNOWN},
        {"", INGEST_KIND_UNKNOWN},
        {"{\"other\":1}", INGEST_KIND_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = cases[i].want == INGEST_KIND_NSYS ? 18 : strlen(cases[i].text);
        ingest_kind k = ingest_sniff(cases[i].text, len);
        check(k == cases[i].want, "sniff case %zu: %s, want %s", i, ingest_kind_name(k),
              ingest_kind_name(cases[i].want));
    }
    const char *names[] = {"kineto", "nsys", "perfcast", "extrap-text", "extrap-json",
                           "extrap-jsonl", "talpas"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        check(!strcmp(ingest_kind_name(ingest_kind_from_name(names[i])), names[i]),
              "name %s round trip", names[i]);
    check(ingest_kind_from_name("json") == INGEST_KIND_UNKNOWN, "unknown name");
    int sniff;
    check(ingest_kind_from_content_type("application/gzip", &sniff) == INGEST_KIND_KINETO && !sniff,
          "gzip content type");
    check(ingest_kind_from_content_type("application/vnd.sqlite3", &sniff) == INGEST_KIND_NSYS,
          "sqlite content type");
    check(ingest_kind_from_content_type("application/json; charset=utf-8", &sniff) ==
                  INGEST_KIND_UNKNOWN && sniff,
          "json content type sniffs");
    check(ingest_kind_from_content_type("image/png", &sniff) == INGEST_KIND_UNKNOWN && !sniff,
          "png refused");
    /* the Extra-P inputs in tests/data sniff as what their names say */
    struct {
        const char *file;
        ingest_kind want;
    } files[] = {{"tests/data/extrap/inputs/one_parameter_1.txt", INGEST_KIND_EXTRAP_TEXT},
                 {"tests/data/extrap/inputs/talpas_1.txt", INGEST_KIND_TALPAS},
                 {"tests/data/extrap/inputs/input1.json", INGEST_KIND_EXTRAP_JSON},
                 {"tests/data/extrap/inputs/input_1.JSON", INGEST_KIND_EXTRAP_JSON},
                 {"tests/data/extrap/inputs/input_1.jsonl", INGEST_KIND_EXTRAP_JSONL}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char head[4096];
        size_t len = 0;
        FILE *f = fopen(files[i].file, "rb");
        if (f) {
            len = fread(head, 1, sizeof head, f);
            fclose(f);
        }
        ingest_kind k = len ? ingest_sniff(head, len) : INGEST_KIND_UNKNOWN;
        check(k == files[i].want, "%s sniffed as %s", files[i].file, ingest_kind_name(k));
    }
    /* the profile entry point */
    profile p;
    ingest_error err;
    const char *pj = "{\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":\"k\","
                     "\"category\":\"comp\",\"metrics\":{\"time\":1}}]}]}]}";
    check(ingest_read_profile(INGEST_KIND_PERFCAST, pj, strlen(pj), NULL, &p, NULL, &err) == 0,
          "perfcast through ingest_read_profile: %s", err.msg);
    profile_free(&p);
    check(ingest_read_profile(INGEST_KIND_TALPAS, pj, strlen(pj), NULL, &p, NULL, &err) < 0 &&
              strstr(err.msg, "not a profile format"),
          "talpas is not a profile");
}

int main(void)
{
    test_formats();
    return check_summary();
}
