/*
 * pmnf.h — the Performance Model Normal Form function type.
 *
 *   f(x_1..x_m) = c_0 + sum_k c_k * prod_l x_l^(i_kl) * log2(x_l)^(j_kl)
 *
 * A parameter's factors may also be a whole single-parameter segmented
 * function (Extra-P's SegmentedTerm inside a multi-parameter term, what its
 * multi-parameter modeler builds on top of the segmented modeler): two
 * segments, each a constant and at most one term of that parameter, with
 * their own coefficients, the first for x <= upto and the second for
 * x >= from:
 *
 *   c + k * {c1 + k1 * x^(2) for x<=50.0; c2 + k2 * x^(4/5) for x>=60.0} * y^(1)
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

/* One segment of a segmented factor: constant + coef * x^poly * log2(x)^log,
 * or the constant alone (nterms 0): a model of Extra-P's basic
 * single-parameter modeler. */
typedef struct pmnf_segment {
    double constant;
    int nterms;
    double coef, poly, log;
} pmnf_segment;

/* A single-parameter segmented function used as one factor: s[0] for
 * x <= upto, s[1] for x >= from. upto == from when the change point is a
 * measured coordinate both segments share; otherwise they are the two
 * measured coordinates that enclose it, and between them, where Extra-P's
 * function is NaN (no segment holds the point), perfcast takes s[1], as the
 * one-parameter segmented model does (modeler.h). */
typedef struct pmnf_segfn {
    double upto, from;
    pmnf_segment s[2];
} pmnf_segfn;

typedef struct pmnf_function {
    int nparams;
    double constant;
    int nterms;
    pmnf_term terms[PMNF_MAX_TERMS];
    /* bit p set: every factor of parameter p in terms is the segmented
     * function seg[p] (its poly and log are then those of seg[p].s[1], the
     * growth beyond the change point, for code that asks for exponents) */
    unsigned segmented;
    pmnf_segfn seg[PMNF_MAX_PARAMS];
} pmnf_function;

/* x^poly * log2(x)^log, as Extra-P computes it (a plain factor). */
double pmnf_factor_eval(const pmnf_factor *f, double x);
/* A segmented factor's value at x: the segment that holds x. */
double pmnf_segfn_eval(const pmnf_segfn *s, double x);
/* 1 when a and b are the same segmented function. */
int pmnf_segfn_equal(const pmnf_segfn *a, const pmnf_segfn *b);
/* The term t of f without its coefficient, at point[nparams] (a segmented
 * factor evaluated as f->seg says). */
double pmnf_term_shape(const pmnf_function *f, const pmnf_term *t, const double *point);
double pmnf_term_eval(const pmnf_function *f, const pmnf_term *t, const double *point);
double pmnf_eval(const pmnf_function *f, const double *point);

/* Makes parameter p's factors in f the segmented function s: sets the bit,
 * the table entry and the growth exponents of every factor of p; when no
 * term has a factor of p, clears them instead. */
void pmnf_set_segmented(pmnf_function *f, int p, const pmnf_segfn *s);

/* Extra-P syntax, parameters named by names[param]. Returns the length the
 * full string needs (like snprintf); the output is always NUL-terminated. */
size_t pmnf_format(const pmnf_function *f, const char *const *names, char *buf, size_t cap);

/* Reads Extra-P syntax back, segmented factors ("{f for x<=a; g for x>=b}")
 * included. Parameter names are looked up in names[0..nnames).
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
