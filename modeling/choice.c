/*
 * choice.c — choosing between perfcast's modelers.
 *
 * "extrap" is Extra-P 4.2.5's modeler (single.c, multi.c), "robust" the
 * noise-resilient one (robust*.c), "segmented" Extra-P 4.2.5's segmented
 * modeler (segmented.c), which takes Extra-P's options too. Options come as key=value text from the
 * CLI and the API; pmnf_options_apply() accepts the key "modeler" besides
 * everything pmnf_options_set() knows and remembers which keys were given,
 * so that pmnf_options_check() can refuse an option the chosen modeler does
 * not use instead of silently ignoring it.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "modeling/modeler.h"

/* Extra-P's own selection options, meaningless to the robust modeler. */
static const char *const extrap_only[] = {
    "use_crossvalidation",     "compare_with_rss",
    "minimum_term_contribution", "allow_combinations_of_sums_and_products",
    "single_parameter_point_selection", "force_combination_exponents",
};
static const char *const extrap_aliases[][2] = {
    {"cross-validation", "use_crossvalidation"},
    {"crossvalidation", "use_crossvalidation"},
};
#define NONLY ((int)(sizeof extrap_only / sizeof extrap_only[0]))

const char *pmnf_modeler_name(pmnf_modeler_kind k)
{
    return k == PMNF_MODELER_ROBUST ? "robust" : k == PMNF_MODELER_SEGMENTED ? "segmented" : "extrap";
}

int pmnf_modeler_parse(const char *name, pmnf_modeler_kind *k)
{
    if (name && !strcmp(name, "extrap")) {
        *k = PMNF_MODELER_EXTRAP;
        return 0;
    }
    if (name && !strcmp(name, "robust")) {
        *k = PMNF_MODELER_ROBUST;
        return 0;
    }
    if (name && !strcmp(name, "segmented")) {
        *k = PMNF_MODELER_SEGMENTED;
        return 0;
    }
    return -1;
}

static int extrap_only_index(const char *key)
{
    for (size_t a = 0; a < sizeof extrap_aliases / sizeof extrap_aliases[0]; a++)
        if (!strcasecmp(key, extrap_aliases[a][0]))
            key = extrap_aliases[a][1];
    for (int i = 0; i < NONLY; i++)
        if (!strcasecmp(key, extrap_only[i]))
            return i;
    return -1;
}

int pmnf_options_apply(pmnf_options *o, const char *key, const char *value, char *err,
                       size_t errcap)
{
    if (!strcasecmp(key, "modeler")) {
        if (pmnf_modeler_parse(value, &o->modeler) < 0) {
            snprintf(err, errcap, "unknown modeler \"%s\" (extrap, robust, segmented)", value);
            return -1;
        }
        return 0;
    }
    if (pmnf_options_set(o, key, value, err, errcap) < 0)
        return -1;
    int i = extrap_only_index(key);
    if (i >= 0)
        o->explicit_options |= 1u << i;
    return 0;
}

int pmnf_options_check(const pmnf_options *o, const char **key, char *err, size_t errcap)
{
    if (o->modeler != PMNF_MODELER_ROBUST)
        return 0;
    for (int i = 0; i < NONLY; i++) {
        if (o->explicit_options & (1u << i)) {
            *key = extrap_only[i];
            snprintf(err, errcap, "option %s does not apply to the robust modeler", extrap_only[i]);
            return -1;
        }
    }
    return 0;
}
