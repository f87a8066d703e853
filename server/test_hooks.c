/*
 * test_hooks.c — faults that only a test build can inject (see
 * test_hooks.h): empty unless compiled with PERFCAST_TEST_HOOKS.
 */
#include "server/test_hooks.h"

#ifdef PERFCAST_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/refit.h"

static int armed(const char *var, const char *value)
{
    const char *v = getenv(var);
    return v && value && !strcmp(v, value);
}

void srv_test_hook_fit(const char *step, const char *callpath)
{
    if (strcmp(step, REFIT_STEP_CALLPATH))
        return;
    if (armed("PERFCAST_TEST_KILL_CALLPATH", callpath))
        raise(SIGKILL);
    if (armed("PERFCAST_TEST_CRASH_CALLPATH", callpath))
        abort();
}

static void request_hook(const char *point, const char *detail)
{
    const char *prefix = getenv("PERFCAST_TEST_KILL_ANSWER");
    if (!strcmp(point, "idempotency-answer") && prefix && *prefix && detail &&
        !strncmp(detail, prefix, strlen(prefix)))
        raise(SIGKILL);
}

void srv_test_hooks_apply(api_ctx *api)
{
    api->test_hook = request_hook;
    const char *lock = getenv("PERFCAST_TEST_IDEMPOTENCY_LOCK");
    if (lock && atof(lock) > 0)
        api->idempotency_lock = atof(lock);
}
#else
void srv_test_hook_fit(const char *step, const char *callpath)
{
    (void)step;
    (void)callpath;
}

void srv_test_hooks_apply(api_ctx *api)
{
    (void)api;
}
#endif
