/*
 * test_hooks.c — faults that only a test build can inject (see
 * test_hooks.h): empty unless compiled with PERFCAST_TEST_HOOKS.
 */
#include "server/test_hooks.h"

#ifdef PERFCAST_TEST_HOOKS
#include <stdlib.h>
#include <string.h>

#include "pipeline/refit.h"

void srv_test_hook_fit(const char *step, const char *callpath)
{
    const char *crash = getenv("PERFCAST_TEST_CRASH_CALLPATH");
    if (crash && callpath && !strcmp(step, REFIT_STEP_CALLPATH) && !strcmp(crash, callpath))
        abort();
}
#else
void srv_test_hook_fit(const char *step, const char *callpath)
{
    (void)step;
    (void)callpath;
}
#endif
