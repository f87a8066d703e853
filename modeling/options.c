/*
 * options.c — modeler options and the building blocks they imply.
 *
 * The defaults are Extra-P 4.2.5's: its 42 single-parameter building blocks
 * (19 without logarithms), cross-validation on, SMAPE comparison, minimum
 * term contribution 0.0005; negative exponents (for strong scaling) and user
 * exponent sets are options, with Extra-P's option names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "modeling/modeler_internal.h"

/* Extra-P's default blocks with logarithms: (numerator, denominator, log). */
static const int default_blocks[][3] = {
    {0, 1, 1}, {0, 1, 2}, {1, 4, 0}, {1, 3, 0}, {1, 4, 1}, {1, 3, 1}, {1, 4, 2}, {1, 3, 2},
    {1, 2, 0}, {1, 2, 1}, {1, 2, 2}, {2, 3, 0}, {3, 4, 0}, {2, 3, 1}, {3, 4, 1}, {4, 5, 0},
    {2, 3, 2}, {3, 4, 2}, {1, 1, 0}, {1, 1, 1}, {1, 1, 2}, {5, 4, 0}, {5, 4, 1}, {4, 3, 0},
    {4, 3, 1}, {3, 2, 0}, {3, 2, 1}, {3, 2, 2}, {5, 3, 0}, {7, 4, 0}, {2, 1, 0}, {2, 1, 1},
    {2, 1, 2}, {9, 4, 0}, {7, 3, 0}, {5, 2, 0}, {5, 2, 1}, {5, 2, 2}, {8, 3, 0}, {11, 4, 0},
    {3, 1, 0}, {3, 1, 1},
};
/* Extra-P's negative blocks for strong scaling, added after the defaults. */
static const int negative_log_blocks[][3] = {
    {0, 1, -1},  {0, 1, -2},  {-1, 4, -1}, {-1, 3, -1}, {-1, 4, -2}, {-1, 3, -2},
    {-1, 2, -1}, {-1, 2, -2}, {-2, 3, -1}, {-3, 4, -1}, {-2, 3, -2}, {-3, 4, -2},
    {-1, 1, -1}, {-1, 1, -2}, {-5, 4, -1}, {-4, 3, -1}, {-3, 2, -1}, {-3, 2, -2},
    {-2, 1, -1}, {-2, 1, -2}, {-5, 2, -1}, {-5, 2, -2}, {-3, 1, -1},
};
static const int poly_blocks[][2] = {
    {1, 4}, {1, 3}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {1, 1}, {5, 4}, {4, 3}, {3, 2},
    {5, 3}, {7, 4}, {2, 1}, {9, 4}, {7, 3}, {5, 2}, {8, 3}, {11, 4}, {3, 1},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

void pmnf_options_default(pmnf_options *o)
{
    memset(o, 0, sizeof *o);
    o->measure = PMNF_MEASURE_MEAN;
    o->use_crossvalidation = 1;
    o->allow_log_terms = 1;
    o->min_term_contribution = 0.0005;
    o->allow_combinations = 1;
    o->point_selection = PMNF_POINTS_AUTO;
}

static int add_block(pmnf_block *b, int *n, double poly, double log)
{
    b[(*n)++] = (pmnf_block){poly, log};
    return 0;
}

/* Extra-P's create_default_building_blocks. */
static int default_block_list(const pmnf_options *o, pmnf_block *b)
{
    int n = 0;
    if (o->allow_log_terms) {
        for (int i = 0; i < COUNT(default_blocks); i++)
            add_block(b, &n, (double)default_blocks[i][0] / default_blocks[i][1],
                      default_blocks[i][2]);
        if (o->allow_negative_exponents)
            for (int i = 0; i < COUNT(negative_log_blocks); i++)
                add_block(b, &n, (double)negative_log_blocks[i][0] / negative_log_blocks[i][1],
                          negative_log_blocks[i][2]);
    } else {
        for (int i = 0; i < COUNT(poly_blocks); i++)
            add_block(b, &n, (double)poly_blocks[i][0] / poly_blocks[i][1], 0);
    }
    if (o->allow_negative_exponents)
        for (int i = 0; i < COUNT(poly_blocks); i++)
            add_block(b, &n, -(double)poly_blocks[i][0] / poly_blocks[i][1], 0);
    return n;
}

/* Extra-P's generate_building_blocks for user exponent sets. */
static int user_block_list(const pmnf_options *o, pmnf_block *b)
{
    int n = 0;
    if (!o->force_combination_exponents) {
        for (int i = 0; i < o->npoly; i++)
            if (o->poly_exponents[i] != 0)
                add_block(b, &n, o->poly_exponents[i], 0);
        for (int j = 0; j < o->nlog; j++)
            if (o->log_exponents[j] != 0)
                add_block(b, &n, 0, o->log_exponents[j]);
    }
    for (int i = 0; i < o->npoly; i++)
        for (int j = 0; j < o->nlog; j++)
            if (o->poly_exponents[i] != 0 || o->log_exponents[j] != 0)
                add_block(b, &n, o->poly_exponents[i], o->log_exponents[j]);
    return n;
}

int blocks_from_options(const pmnf_options *o, pmnf_block **out)
{
    int cap = COUNT(default_blocks) + COUNT(negative_log_blocks) + 2 * COUNT(poly_blocks) +
              PMNF_MAX_USER_EXPONENTS * (PMNF_MAX_USER_EXPONENTS + 2);
    pmnf_block *b = malloc(sizeof *b * (size_t)cap);
    if (!b)
        return -1;
    int n;
    if (o->npoly > 0 || o->nlog > 0) {
        n = user_block_list(o, b);
        if (o->retain_default_exponents)
            n += default_block_list(o, b + n);
    } else {
        n = default_block_list(o, b);
    }
    *out = b;
    return n;
}

/* ---- options from text ------------------------------------------------- */

static int parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
        *out = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") ||
             !strcasecmp(v, "off"))
        *out = 0;
    else
        return -1;
    return 0;
}

/* "1/2,1,3/2" or "0.5,1" into list; at most PMNF_MAX_USER_EXPONENTS. */
static int parse_exponent_list(const char *v, double *list, int *n)
{
    *n = 0;
    const char *p = v;
    while (*p) {
        char *end;
        errno = 0;
        double num = strtod(p, &end);
        if (end == p || errno)
            return -1;
        p = end;
        if (*p == '/') {
            double den = strtod(p + 1, &end);
            if (end == p + 1 || den == 0)
                return -1;
            num /= den;
            p = end;
        }
        if (*n == PMNF_MAX_USER_EXPONENTS)
            return -1;
        list[(*n)++] = num;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return 0;
}

int pmnf_options_set(pmnf_options *o, const char *key, const char *value, char *err, size_t errcap)
{
    int bad = 0;
    if (!strcasecmp(key, "use_crossvalidation") || !strcasecmp(key, "cross-validation") ||
        !strcasecmp(key, "crossvalidation")) {
        bad = parse_bool(value, &o->use_crossvalidation);
    } else if (!strcasecmp(key, "compare_with_rss")) {
        bad = parse_bool(value, &o->compare_with_rss);
    } else if (!strcasecmp(key, "allow_log_terms")) {
        bad = parse_bool(value, &o->allow_log_terms);
    } else if (!strcasecmp(key, "allow_negative_exponents") ||
               !strcasecmp(key, "negative_exponents")) {
        bad = parse_bool(value, &o->allow_negative_exponents);
    } else if (!strcasecmp(key, "minimum_term_contribution")) {
        char *end;
        double v = strtod(value, &end);
        bad = end == value || *end || !(v >= 0 && v < 1);
        if (!bad)
            o->min_term_contribution = v;
    } else if (!strcasecmp(key, "poly_exponents") || !strcasecmp(key, "polynomial")) {
        bad = parse_exponent_list(value, o->poly_exponents, &o->npoly);
    } else if (!strcasecmp(key, "log_exponents") || !strcasecmp(key, "logarithmic")) {
        bad = parse_exponent_list(value, o->log_exponents, &o->nlog);
    } else if (!strcasecmp(key, "retain_default_exponents")) {
        bad = parse_bool(value, &o->retain_default_exponents);
    } else if (!strcasecmp(key, "force_combination_exponents")) {
        bad = parse_bool(value, &o->force_combination_exponents);
    } else if (!strcasecmp(key, "allow_combinations_of_sums_and_products")) {
        bad = parse_bool(value, &o->allow_combinations);
    } else if (!strcasecmp(key, "single_parameter_point_selection")) {
        if (!strcasecmp(value, "auto"))
            o->point_selection = PMNF_POINTS_AUTO;
        else if (!strcasecmp(value, "all"))
            o->point_selection = PMNF_POINTS_ALL;
        else if (!strcasecmp(value, "smallest"))
            o->point_selection = PMNF_POINTS_SMALLEST;
        else
            bad = 1;
    } else if (!strcasecmp(key, "measure")) {
        if (!strcasecmp(value, "mean"))
            o->measure = PMNF_MEASURE_MEAN;
        else if (!strcasecmp(value, "median"))
            o->measure = PMNF_MEASURE_MEDIAN;
        else
            bad = 1;
    } else {
        snprintf(err, errcap, "unknown modeler option \"%s\"", key);
        return -1;
    }
    if (bad) {
        snprintf(err, errcap, "invalid value \"%s\" for modeler option \"%s\"", value, key);
        return -1;
    }
    return 0;
}
