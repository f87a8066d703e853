/*
 * sweep_plan.h — a sweep definition (paper 003 §2.1): the Cartesian product
 * of varying parameters (numbers) and factors (categorical levels), filtered
 * by a legality rule (sweep_legal.h), each legal point run `repetitions`
 * times by a command template.
 *
 *   {"parameters": {"ranks": [2, 4, 8], "batch_size": [32, 64]},
 *    "factors":    {"precision": ["fp16", "fp32"]},
 *    "constants":  {"nodes": 1},
 *    "legal":      "batch_size * ranks <= 256",
 *    "repetitions": 10,
 *    "command":    "srun -n {ranks} train.py --bs {batch_size} --precision {precision} --seed {repetition}",
 *    "epochs_per_run": 1}
 *
 * Only "parameters" and "command" are required; "repetitions" defaults to
 * 1. The template's {name} is replaced by the point's value of a parameter,
 * factor or constant, or by the repetition number ({repetition}); a {name}
 * naming none of them is refused, stating this rule. "{{" writes a literal
 * "{" ("{{ranks}" prints "{ranks}"), "${...}" is the shell's and kept as
 * written ("${ranks}" stays "${ranks}"), other braces are kept. Integers
 * print without a decimal point. Points are
 * enumerated in odometer order (the last varying name fastest).
 *
 * Parsing reports the faulty field ("parameters.ranks", "legal", ...) and a
 * message. Pure: no I/O, no globals; the definition owns its memory
 * (sweep_def_free).
 */
#ifndef PERFCAST_SWEEP_PLAN_H
#define PERFCAST_SWEEP_PLAN_H

#include <jansson.h>
#include <stddef.h>

#include "sweep/sweep_legal.h"

#define SWEEP_MAX_VARS 16
#define SWEEP_MAX_VALUES 10000  /* values of one varying name */
#define SWEEP_MAX_POINTS 1000000 /* points of the product, before legality */
#define SWEEP_MAX_RUNS 100000    /* legal points × repetitions (service and CLI) */
#define SWEEP_MAX_REPETITIONS 1000
#define SWEEP_NAME_MAX 64

typedef struct sweep_var {
    char name[SWEEP_NAME_MAX];
    int nvalues;
    double *values;  /* numeric parameter: nvalues numbers; NULL for a factor */
    char **levels;   /* factor: nvalues level names; NULL for a parameter */
} sweep_var;

typedef struct sweep_def {
    int nvars;                 /* parameters first, then factors */
    int nparams;               /* vars[0..nparams) are numeric */
    sweep_var vars[SWEEP_MAX_VARS];
    int nconst;
    char const_names[SWEEP_MAX_VARS][SWEEP_NAME_MAX];
    double const_values[SWEEP_MAX_VARS];
    int has_legal;
    sweep_legal legal;         /* over the numeric names: parameters, then constants */
    int repetitions;
    char *command;
    double epochs_per_run;
    long product;              /* points of the product before legality */
} sweep_def;

/* Parses doc into *out. 0, or -1 with the field at fault in field (e.g.
 * "parameters.ranks[2]") and a message in err; *out is then empty. */
int sweep_def_parse(const json_t *doc, sweep_def *out, char *field, size_t fieldcap, char *err,
                    size_t errcap);
void sweep_def_free(sweep_def *d);

/* Enumeration: idx[nvars] starts at all zeros (sweep_def_first); next
 * advances it and returns 0 after the last point. */
void sweep_def_first(const sweep_def *d, int *idx);
int sweep_def_next(const sweep_def *d, int *idx);
/* The legal points of the product (at most SWEEP_MAX_POINTS are tried). */
long sweep_def_legal_points(const sweep_def *d);
/* The size of d's plan, as the service and `perfcast sweep plan` both check
 * it: 0 with *legal its legal points, or -1 with why in msg when its legal
 * points × repetitions are more than SWEEP_MAX_RUNS. */
int sweep_def_runs_check(const sweep_def *d, long *legal, char *msg, size_t cap);

/* The runs of d in plan order: legal point by legal point, repetition by
 * repetition. Start with sweep_runs_start; each sweep_runs_next moves to
 * the next run (idx the point, rep from 1; rep 1: a new point), 0 after
 * the last. */
typedef struct sweep_runs {
    int idx[SWEEP_MAX_VARS];
    int rep;
    int started;
} sweep_runs;
void sweep_runs_start(sweep_runs *w);
int sweep_runs_next(const sweep_def *d, sweep_runs *w);
/* 1 when the point idx is legal. */
int sweep_def_legal(const sweep_def *d, const int *idx);
/* The numeric value of `name` at idx (parameter or constant): 1 found, 0 not. */
int sweep_def_number(const sweep_def *d, const int *idx, const char *name, double *out);
/* The command of point idx and repetition rep into buf (cap bytes).
 * Returns the length, or -1 when it does not fit. */
int sweep_def_command(const sweep_def *d, const int *idx, int rep, char *buf, size_t cap);
/* A number as the template prints it ("8", "0.5"); buf needs 32 bytes. */
void sweep_format_number(double v, char *buf);

#endif
