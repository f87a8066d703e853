/*
 * cicheck_render.h — the verdicts of `perfcast ci-check` written for a
 * reader: a table for a terminal and Markdown for a pull-request comment,
 * both from the document GET /v1/experiments/{id}/regressions answers.
 *
 * Each callpath (and each part of the application) gets one verdict and
 * the point it was judged at: the measured point where the change counted
 * (the largest significant increase for a regression, decrease for an
 * improvement, the largest change for an unchanged one) or the target for
 * a change only beyond the measurements. The base and head values with
 * their 95% intervals and the change shown are the ones at that point, so
 * the words and the numbers of a line always agree; the change at the
 * target follows, marked as an extrapolation.
 */
#ifndef PERFCAST_CICHECK_RENDER_H
#define PERFCAST_CICHECK_RENDER_H

#include <jansson.h>
#include <stdio.h>

/* The regressions document d as a table (text) or as Markdown. */
void cicheck_print_text(FILE *out, const json_t *d);
void cicheck_print_markdown(FILE *out, const json_t *d);

/* The comparison an entry of "application" or "callpaths" is judged on:
 * an element of its "measured" array, or its "at" (the target) when the
 * status is "diverges"; NULL for an unmodeled entry. *at_target is set to
 * 1 when the target was chosen. */
const json_t *cicheck_judged(const json_t *entry, int *at_target);

#endif
