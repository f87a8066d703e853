/*
 * training.h — an experiment's training set-up (Extra-Deep §2.2, Eq. 2-3) as
 * expressions of its parameters: train_samples D_t, validation_samples D_v,
 * batch_size B, data_parallel G, model_parallel M. Each is an integer or an
 * arithmetic expression (modeling/expr.h), e.g. the weak-scaling case study's
 * D_t = "50000*x1" or a modelled batch size B = "x2". Shared by the creation
 * check (api/experiments.c), the upload check (api/profiles.c) and the refit
 * (server/refit.c), so all three agree on what a coordinate's steps are.
 */
#ifndef PERFCAST_ANALYSIS_TRAINING_H
#define PERFCAST_ANALYSIS_TRAINING_H

#include <jansson.h>
#include <stddef.h>

#include "modeling/expr.h"

enum { TRAINING_DT = 0, TRAINING_DV, TRAINING_B, TRAINING_G, TRAINING_M, TRAINING_NEXPR };

typedef struct training_setup {
    expr e[TRAINING_NEXPR]; /* D_t, D_v, B, G, M */
    int warmup_steps;
} training_setup;

/* The key of expression k in the "training" object ("batch_size"). */
const char *training_key(int k);

/* Compiles the stored "training" object against the parameter names.
 * Integers and strings are both accepted; absent validation_samples is 0,
 * absent model_parallel 1, absent data_parallel the first parameter.
 * Returns 0, or -1 with "training.<key>" in field and a message. */
int training_compile(const json_t *training, const char *const *names, int nnames,
                     training_setup *out, char *field, size_t fieldcap, char *msg, size_t msgcap);

/* n_t = floor(D_t·M/(G·B)) and n_v likewise at point (values in the order
 * of the names). Returns 0, or -1 with the field at fault and a message
 * naming the coordinate: an expression that is not finite there, D_t or B
 * or G or M not > 0, D_v < 0, or no training step (n_t < 1). */
int training_steps_at(const training_setup *s, const double *point, const char *const *names,
                      int nnames, double *n_t, double *n_v, char *field, size_t fieldcap,
                      char *msg, size_t msgcap);

/* The degrees alone at point: data_parallel G and model_parallel M > 0, the
 * rule and message of training_steps_at (a rank count G·M there). 0, or -1
 * with the field at fault and a message naming the coordinate. */
int training_degrees_at(const training_setup *s, const double *point, const char *const *names,
                        int nnames, char *field, size_t fieldcap, char *msg, size_t msgcap);

/* 1 when expression k reads no parameter. */
int training_is_constant(const training_setup *s, int k, int nnames);

#endif
