/*
 * test_expr.c — the parameter expressions of modeling/expr.h: precedence and
 * associativity, parameters, every compile error with its offset, the
 * length and depth bounds, and evaluation failures.
 */
#include <string.h>

#include "modeling/expr.h"
#include "tests/check.h"

static const char *const names[] = {"ranks", "nodes", "gpus_per_node", "x2"};
static const double values[] = {32, 4, 8, 0.5};

static double eval_text(const char *text, int *ok)
{
    expr e;
    char err[128];
    double v = NAN;
    *ok = expr_compile(text, names, 4, &e, err, sizeof(err)) == 0 && expr_eval(&e, values, &v) == 0;
    return v;
}

static void test_values(void)
{
    static const struct {
        const char *text;
        double want;
    } cases[] = {
        {"ranks", 32},
        {"ranks/4", 8},
        {"4", 4},
        {"nodes*gpus_per_node", 32},
        {" ranks / ( nodes * 2 ) ", 4},
        {"1+2*3", 7},
        {"(1+2)*3", 9},
        {"10-4-3", 3},          /* left-associative */
        {"64/4/2", 8},          /* left-associative */
        {"2^3^2", 512},         /* right-associative: 2^(3^2) */
        {"-2^2", -4},           /* unary minus binds looser than ^ */
        {"(-2)^2", 4},
        {"2^-1", 0.5},
        {"--3", 3},
        {"+3", 3},
        {"3--2", 5},
        {"2*-ranks", -64},
        {"x2*4", 2},
        {"1e3/ranks", 31.25},
        {".5*ranks", 16},
        {"1.5e-1*20", 3},
        {"ranks^0.5", 5.656854249492381},
        {"gpus_per_node-nodes*2", 0},
        {"0.1+0.2", 0.1 + 0.2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int ok;
        double v = eval_text(cases[i].text, &ok);
        check(ok && check_close(v, cases[i].want, 1e-15, 1e-300), "\"%s\" = %.17g, want %.17g",
              cases[i].text, v, cases[i].want);
    }
}

static void test_compile_errors(void)
{
    static const struct {
        const char *text;
        const char *want; /* the whole message */
    } cases[] = {
        {"", "offset 0: empty expression"},
        {"   ", "offset 3: empty expression"},
        {"nodes*gpus", "offset 6: unknown parameter \"gpus\""},
        {"Ranks", "offset 0: unknown parameter \"Ranks\""},
        {"rank", "offset 0: unknown parameter \"rank\""},
        {"ranks/", "offset 6: expected a number, a parameter or '(' before the end"},
        {"ranks/*4", "offset 6: expected a number, a parameter or '(' at '*'"},
        {"(ranks/4", "offset 8: expected ')' to close the '(' at offset 0"},
        {"ranks)", "offset 5: expected an operator or the end at ')'"},
        {"ranks 4", "offset 6: expected an operator or the end at '4'"},
        {"4ranks", "offset 1: expected an operator or the end at 'r'"},
        {"2e", "offset 1: expected an operator or the end at 'e'"},
        {".", "offset 0: expected a number"},
        {"1e999", "offset 0: number out of range"},
        {"ranks % 4", "offset 6: expected an operator or the end at '%'"},
        {"()", "offset 1: expected a number, a parameter or '(' at ')'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        expr e;
        char err[128];
        int rc = expr_compile(cases[i].text, names, 4, &e, err, sizeof(err));
        check(rc == -1 && strcmp(err, cases[i].want) == 0, "\"%s\": \"%s\", want \"%s\"",
              cases[i].text, err, cases[i].want);
        check(e.nops == 0, "\"%s\": out zeroed", cases[i].text);
    }
    /* a small error buffer is filled and terminated, never overrun */
    expr e;
    char small[8] = "#######";
    check(expr_compile("nodes*gpus", names, 4, &e, small, 6) == -1 && strlen(small) == 5 &&
              small[6] == '#',
          "truncated message \"%s\"", small);
    check(expr_compile("gpus", names, 4, &e, NULL, 0) == -1, "no error buffer");
    /* no names at all: numbers only */
    check(expr_compile("4", NULL, 0, &e, small, sizeof(small)) == 0, "constant without names");
    check(expr_compile("ranks", NULL, 0, &e, small, sizeof(small)) == -1, "name without names");
}

static void test_bounds(void)
{
    expr e;
    char err[128], text[EXPR_MAX_TEXT + 2];
    /* longest accepted: "1+1+...+1" of exactly EXPR_MAX_TEXT bytes (odd length) */
    memset(text, 0, sizeof(text));
    for (int i = 0; i < EXPR_MAX_TEXT - 1; i++)
        text[i] = i % 2 ? '+' : '1';
    double v = 0;
    check(expr_compile(text, names, 4, &e, err, sizeof(err)) == 0 && expr_eval(&e, values, &v) == 0 &&
              v == EXPR_MAX_TEXT / 2,
          "%d-byte sum: %s = %g", EXPR_MAX_TEXT - 1, err, v);
    for (int i = 0; i < EXPR_MAX_TEXT + 1; i++)
        text[i] = i % 2 ? '+' : '1';
    check(expr_compile(text, names, 4, &e, err, sizeof(err)) == -1 &&
              strstr(err, "longer than 256 bytes") != NULL,
          "too long: %s", err);
    /* a string of minus signs: every one is a level of nesting */
    memset(text, 0, sizeof(text));
    memset(text, '-', EXPR_MAX_DEPTH - 1);
    text[EXPR_MAX_DEPTH - 1] = '2';
    check(expr_compile(text, names, 4, &e, err, sizeof(err)) == 0 && expr_eval(&e, values, &v) == 0 &&
              v == -2,
          "%d minus signs: %s = %g", EXPR_MAX_DEPTH - 1, err, v);
    memset(text, '-', EXPR_MAX_DEPTH);
    text[EXPR_MAX_DEPTH] = '2';
    check(expr_compile(text, names, 4, &e, err, sizeof(err)) == -1 && strstr(err, "nested deeper than 32"),
          "too deep: %s", err);
    memset(text, 0, sizeof(text));
    memset(text, '(', 40);
    check(expr_compile(text, names, 4, &e, err, sizeof(err)) == -1 && strstr(err, "nested deeper than 32"),
          "parentheses too deep: %s", err);
}

static void test_eval_errors(void)
{
    expr e;
    char err[128];
    double v;
    static const char *bad[] = {"ranks/0", "1/(1/0)", "(-8)^0.5", "10^400", "0/0",
                                "ranks/(nodes-4)"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int c = expr_compile(bad[i], names, 4, &e, err, sizeof(err));
        check(c == 0 && expr_eval(&e, values, &v) == -1, "\"%s\" must compile and fail to evaluate",
              bad[i]);
    }
    double nonfinite[] = {NAN, 4, 8, 0.5};
    check(expr_compile("ranks*0", names, 4, &e, err, sizeof(err)) == 0 &&
              expr_eval(&e, nonfinite, &v) == -1,
          "non-finite parameter value refused");
    expr zero;
    memset(&zero, 0, sizeof(zero));
    check(expr_eval(&zero, values, &v) == -1, "empty program refused");
}

static void test_uses(void)
{
    expr e;
    char err[128];
    check(expr_compile("nodes*gpus_per_node/2", names, 4, &e, err, sizeof(err)) == 0, "%s", err);
    check(!expr_uses(&e, 0) && expr_uses(&e, 1) && expr_uses(&e, 2) && !expr_uses(&e, 3),
          "expr_uses");
}

int main(void)
{
    test_values();
    test_compile_errors();
    test_bounds();
    test_eval_errors();
    test_uses();
    return check_summary();
}
