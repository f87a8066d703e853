/*
 * pmnf.h — the Performance Model Normal Form function type.
 *
 *   f(x_1..x_m) = c_0 + sum_k c_k * prod_l x_l^(i_kl) * log2(x_l)^(j_kl)
 *
 * A pmnf_function is a plain value (no pointers), so models can be copied,
 * stored and compared freely. This file knows how to evaluate a function,
 * print it in Extra-P's syntax ("-0.88 + 0.2017 * x^(2)") and read that syntax
 * back. It knows nothing about fitting (see modeler.h) or about files.
 */
#ifndef PERFCAST_PMNF_H
#define PERFCAST_PMNF_H

#include <stddef.h>

#define PMNF_MAX_PARAMS 8
#define PMNF_MAX_TERMS 8
#define PMNF_MAX_COEFS (PMNF_MAX_TERMS + 1) /* constant + terms */

/* One parameter's part of a term: x^poly * log2(x)^log (either may be 0). */
typedef struct pmnf_factor {
    int param;  /* index of the parameter, 0-based */
    double poly;
    double log;
} pmnf_factor;

typedef struct pmnf_term {
    double coef;
    int nfactors;
    pmnf_factor factors[PMNF_MAX_PARAMS]; /* in increasing param order */
} pmnf_term;

typedef struct pmnf_function {
    int nparams;
    double constant;
    int nterms;
    pmnf_term terms[PMNF_MAX_TERMS];
} pmnf_function;

/* x^poly * log2(x)^log, as Extra-P computes it. */
double pmnf_factor_eval(const pmnf_factor *f, double x);
/* The term's value without its coefficient, at point[nparams]. */
double pmnf_term_shape(const pmnf_term *t, const double *point);
double pmnf_term_eval(const pmnf_term *t, const double *point);
double pmnf_eval(const pmnf_function *f, const double *point);

/* Extra-P syntax, parameters named by names[param]. Returns the length the
 * full string needs (like snprintf); the output is always NUL-terminated. */
size_t pmnf_format(const pmnf_function *f, const char *const *names, char *buf, size_t cap);

/* Reads Extra-P syntax back. Parameter names are looked up in names[0..nnames).
 * Returns 0, or -1 with a message in err. */
int pmnf_parse(const char *s, const char *const *names, int nnames, pmnf_function *out,
               char *err, size_t errcap);

/* A double the way Python's repr() prints it (shortest round-trip:
 * "1.0", "0.20168243826499177", "1e-05", "1.5e+16"). buf needs 32 bytes. */
void pmnf_format_double(double v, char *buf);
/* An exponent the way Extra-P prints it: "2", "3/2", "-1/4", or a decimal. */
void pmnf_format_exponent(double e, char *buf);

/* Growth order of a term for a parameter: (poly, log) of its factor, (0,0)
 * when the term does not involve the parameter. */
void pmnf_term_exponents(const pmnf_term *t, int param, double *poly, double *log);

#endif
