/*
 * gen_pmnf.c — writes a synthetic measurement set with known PMNF ground truth.
 *
 *   gen_pmnf OUT_PREFIX [--callpaths N] [--params 1|2] [--noise F] [--reps R] [--seed S]
 *
 * OUT_PREFIX.txt is an Extra-P text file (the measured coordinates only, one
 * REGION per callpath kernel_K, metric "time", R repetitions per point);
 * OUT_PREFIX.truth.json holds each callpath's true function (building blocks
 * as [num, den, log] per parameter, c0, c1, c2, multiplicative) and its true
 * values at the held-out extrapolation points, for bench/score_models.c.
 * The data come from gen_core.h; the same seed always gives the same files.
 */
#include "bench/gen_core.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen_args {
    const char *prefix;
    long callpaths;
    int params;
    double noise;
    int reps;
    unsigned long long seed;
} gen_args;

static int usage(void)
{
    fprintf(stderr, "usage: gen_pmnf OUT_PREFIX [--callpaths N] [--params 1|2] [--noise F] "
                    "[--reps R] [--seed S]\n");
    return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Sets the option named by key ("callpaths", ...) from text. */
static int set_option(gen_args *a, const char *key, const char *val)
{
    long v;
    char *end;
    if (!strcmp(key, "callpaths"))
        return parse_long(val, 0, 100000000, &a->callpaths);
    if (!strcmp(key, "params")) {
        if (parse_long(val, 1, 2, &v))
            return -1;
        a->params = (int)v;
        return 0;
    }
    if (!strcmp(key, "reps")) {
        if (parse_long(val, 1, 1000, &v))
            return -1;
        a->reps = (int)v;
        return 0;
    }
    if (!strcmp(key, "noise")) {
        a->noise = strtod(val, &end);
        return end == val || *end || !(a->noise >= 0 && a->noise < 1) ? -1 : 0;
    }
    if (!strcmp(key, "seed")) {
        errno = 0;
        a->seed = strtoull(val, &end, 10);
        return errno || end == val || *end ? -1 : 0;
    }
    return -1;
}

/* Accepts "--key value" and "--key=value". */
static int parse_args(int argc, char **argv, gen_args *a)
{
    *a = (gen_args){NULL, 100, 1, 0.05, 5, 1};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2)) {
            if (a->prefix)
                return -1;
            a->prefix = arg;
            continue;
        }
        char key[32];
        const char *eq = strchr(arg + 2, '=');
        size_t klen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (klen >= sizeof key)
            return -1;
        memcpy(key, arg + 2, klen);
        key[klen] = '\0';
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val || set_option(a, key, val)) {
            fprintf(stderr, "gen_pmnf: bad option %s\n", arg);
            return -1;
        }
    }
    return a->prefix ? 0 : -1;
}

/* ---- fast "%.17g" ----------------------------------------------------
 * glibc needs ~300 ns per "%.17g"; the DATA lines hold millions of values.
 * fmt_g17 produces exactly what printf("%.17g") does (rounding to nearest,
 * ties to even) with 128-bit integer arithmetic, and falls back to snprintf
 * for zero, non-finite values and magnitudes outside about [1e-10, 1e30]. */

__extension__ typedef unsigned __int128 u128;

/* round(m * 2^e * 10^k) to nearest, ties to even, into *q; -1 when an
 * intermediate does not fit 126 bits. */
static int scaled_round(uint64_t m, int e, int k, u128 *q)
{
    const u128 limit = (u128)1 << 122;
    u128 num = m, den = 1;
    for (int i = 0; i < k; i++, num *= 10)
        if (num >= limit)
            return -1;
    for (int i = 0; i < -k; i++, den *= 10)
        if (den >= limit)
            return -1;
    if (e > 0) {
        if (e > 125 || num >> (125 - e))
            return -1;
        num <<= e;
    } else if (e < 0) {
        if (-e > 125 || den >> (125 + e))
            return -1;
        den <<= -e;
    }
    u128 quot = num / den, rem = num % den;
    if (2 * rem > den || (2 * rem == den && (quot & 1)))
        quot++;
    *q = quot;
    return 0;
}

/* 17 significant decimal digits of v > 0 (finite) into d, decimal exponent
 * into *x: v ~ d[0].d[1..16] * 10^x. -1 when out of the exact range. */
static int digits17(double v, char d[17], int *x)
{
    int e2;
    uint64_t m = (uint64_t)ldexp(frexp(v, &e2), 53); /* v = m * 2^(e2-53) exactly */
    int ex = (int)floor(log10(v));
    const u128 lo = (u128)10000000000000000ULL, hi = lo * 10;
    u128 q;
    for (int tries = 0;; tries++) {
        if (tries > 3 || scaled_round(m, e2 - 53, 16 - ex, &q))
            return -1;
        if (q < lo)
            ex--;
        else if (q >= hi)
            ex++;
        else
            break;
    }
    uint64_t q64 = (uint64_t)q; /* < 10^17 */
    for (int i = 16; i >= 0; i--, q64 /= 10)
        d[i] = (char)('0' + (int)(q64 % 10));
    *x = ex;
    return 0;
}

/* Writes v as printf("%.17g") would; returns the length (buf needs 32 bytes). */
static int fmt_g17(double v, char *buf)
{
    char d[17];
    int x, n = 0, last = 16;
    if (!isfinite(v) || v == 0 || digits17(fabs(v), d, &x))
        return snprintf(buf, 32, "%.17g", v);
    if (v < 0)
        buf[n++] = '-';
    while (last > 0 && d[last] == '0')
        last--;
    if (x < -4 || x >= 17) {
        buf[n++] = d[0];
        if (last > 0)
            buf[n++] = '.';
        for (int i = 1; i <= last; i++)
            buf[n++] = d[i];
        return n + snprintf(buf + n, 32 - (size_t)n, "e%c%02d", x < 0 ? '-' : '+', abs(x));
    }
    if (x < 0) {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int i = 0; i < -x - 1; i++)
            buf[n++] = '0';
        for (int i = 0; i <= last; i++)
            buf[n++] = d[i];
    } else {
        for (int i = 0; i <= (last > x ? last : x); i++) {
            if (i == x + 1)
                buf[n++] = '.';
            buf[n++] = d[i];
        }
    }
    buf[n] = '\0';
    return n;
}

static void put_double(FILE *f, double v)
{
    char buf[32];
    fwrite(buf, 1, (size_t)fmt_g17(v, buf), f);
}

static void write_point(FILE *f, const double *p, int nparams, const char *open, const char *sep,
                        const char *close)
{
    fputs(open, f);
    for (int i = 0; i < nparams; i++)
        fprintf(f, "%s%g", i ? sep : "", p[i]);
    fputs(close, f);
}

static void write_text_header(FILE *f, const gen_layout *l)
{
    for (int i = 0; i < l->nparams; i++)
        fprintf(f, "PARAMETER %s\n", l->names[i]);
    fputs("\nPOINTS", f);
    for (int i = 0; i < l->npoints; i++)
        write_point(f, l->points[i], l->nparams, " ( ", " ", " )");
    fputs("\n\nMETRIC time\n", f);
}

static void write_truth_header(FILE *f, const gen_layout *l, double noise)
{
    fputs("{\"parameters\": [", f);
    for (int i = 0; i < l->nparams; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", l->names[i]);
    fprintf(f, "], \"noise\": %.17g, \"callpaths\": [", noise);
}

static void write_truth(FILE *f, long k, const gen_truth *t, const gen_layout *l)
{
    fprintf(f, "%s{\"callpath\": \"kernel_%ld\", \"blocks\": [", k ? ", " : "", k);
    for (int i = 0; i < l->nparams; i++) {
        const gen_block *b = &GEN_BLOCKS[t->blocks[i]];
        fprintf(f, "%s[%d, %d, %d]", i ? ", " : "", b->num, b->den, b->log);
    }
    fputs("], \"c0\": ", f);
    put_double(f, t->c0);
    fputs(", \"c1\": ", f);
    put_double(f, t->c1);
    fputs(", \"c2\": ", f);
    put_double(f, t->c2);
    fprintf(f, ", \"multiplicative\": %s, \"eval\": [", t->multiplicative ? "true" : "false");
    for (int i = 0; i < l->neval; i++) {
        fputs(i ? ", {\"point\": " : "{\"point\": ", f);
        write_point(f, l->eval[i], l->nparams, "[", ", ", "]");
        fputs(", \"value\": ", f);
        put_double(f, gen_truth_eval(t, l->nparams, l->eval[i]));
        fputc('}', f);
    }
    fputs("]}", f);
}

/* One callpath: its REGION and DATA lines, then its truth entry. */
static void write_callpath(FILE *txt, FILE *truth, gen_rng *r, long k, const gen_layout *l,
                           const gen_args *a, double *reps)
{
    gen_truth t;
    gen_truth_draw(r, l->nparams, &t);
    fprintf(txt, "REGION kernel_%ld\n", k);
    for (int i = 0; i < l->npoints; i++) {
        gen_measure(r, gen_truth_eval(&t, l->nparams, l->points[i]), a->noise, a->reps, reps);
        fputs("DATA", txt);
        for (int j = 0; j < a->reps; j++) {
            fputc(' ', txt);
            put_double(txt, reps[j]);
        }
        fputc('\n', txt);
    }
    write_truth(truth, k, &t, l);
}

static FILE *open_out(const char *prefix, const char *suffix)
{
    size_t n = strlen(prefix) + strlen(suffix) + 1;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s%s", prefix, suffix);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "gen_pmnf: cannot write %s: %s\n", path, strerror(errno));
    else
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    free(path);
    return f;
}

static int close_out(FILE *f, const char *what)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "gen_pmnf: error writing the %s file\n", what);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    gen_args a;
    gen_layout l;
    if (parse_args(argc, argv, &a) || gen_layout_init(&l, a.params))
        return usage();
    FILE *txt = open_out(a.prefix, ".txt");
    FILE *truth = txt ? open_out(a.prefix, ".truth.json") : NULL;
    double *reps = malloc(sizeof *reps * (size_t)a.reps);
    if (!txt || !truth || !reps) {
        if (txt)
            fclose(txt);
        if (truth)
            fclose(truth);
        free(reps);
        return 1;
    }
    gen_rng r;
    gen_rng_seed(&r, a.seed);
    write_text_header(txt, &l);
    write_truth_header(truth, &l, a.noise);
    for (long k = 0; k < a.callpaths; k++)
        write_callpath(txt, truth, &r, k, &l, &a, reps);
    fputs("]}\n", truth);
    free(reps);
    int rc = close_out(txt, "text");
    rc |= close_out(truth, "truth");
    return rc ? 1 : 0;
}
