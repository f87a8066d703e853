/*
 * finite_point.c — refusing a point where an answer's numbers overflow a
 * double (see finite_point.h).
 */
#include "analysis/finite_point.h"

#include <math.h>
#include <stdio.h>

int finite_point_far(int nparams, const double *point)
{
    int far = 0;
    for (int i = 1; i < nparams; i++)
        if (fabs(log(point[i])) > fabs(log(point[far])))
            far = i;
    return far;
}

int finite_point_check(const fp_value *v, int n, const char *const *names, int nparams,
                       const double *point, const char *const *fields, an_problem *p)
{
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (!isfinite(v[i].value))
            bad = i;
    if (bad < 0)
        return 0;
    char at[300];
    an_point_text(names, nparams, point, 6, at, sizeof at);
    int far = finite_point_far(nparams, point);
    const char *field = nparams == 0 ? NULL
                        : fields && fields[far] ? fields[far]
                                                : names[far];
    return an_problem_set(p, 400, field,
                          "the prediction is not finite at %s: %s gives %g there, beyond what a "
                          "double holds; ask nearer the measured range",
                          at, v[bad].what, v[bad].value);
}
