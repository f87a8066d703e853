/*
 * param_names.h — parameter names an experiment may not use, because
 * perfcast already gives them a meaning: in cost formulas (T, ranks,
 * cores_per_rank, price_per_core_hour), in answers (the application parts
 * epoch, comp, comm, mem) and as query parameters of the routes that take
 * coordinates from the query (?ranks=8&metric=time, ?epochs=90, uploads'
 * ?format=, ?commit=, ...). A parameter with such a name would be read as
 * the built-in in one place and as the parameter in another.
 *
 * `ranks` is the one exception: it is the rank count G·M (data_parallel ×
 * model_parallel) in cost formulas, answers and candidates, and a
 * parameter may carry that name exactly when it IS the rank count, i.e.
 * G·M equals it at every point (data_parallel "ranks" and model_parallel
 * "1", or "ranks/4" and "4"). Checked by evaluating G·M at sample points.
 */
#ifndef PERFCAST_ANALYSIS_PARAM_NAMES_H
#define PERFCAST_ANALYSIS_PARAM_NAMES_H

#include <stddef.h>

/* 0 when name may be a parameter; -1 with why (and what to call it
 * instead) in msg. `ranks` passes here: see param_ranks_check. */
int param_name_check(const char *name, char *msg, size_t cap);

/* When one of names[0..n) is "ranks", checks that G·M (the texts of
 * data_parallel and model_parallel) equals it; 0, or -1 with why in msg.
 * *index is the offending parameter's index. */
int param_ranks_check(const char *const *names, int n, const char *dp, const char *mp,
                      int *index, char *msg, size_t cap);

#endif
