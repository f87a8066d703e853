/*
 * test_hooks.c — faults that only a test build can inject (see
 * test_hooks.h): empty unless compiled with PERFCAST_TEST_HOOKS.
 */
#include "server/test_hooks.h"

#ifdef PERFCAST_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int prefixed(const char *var, const char *value)
{
    const char *prefix = getenv(var);
    return prefix && *prefix && value && !strncmp(value, prefix, strlen(prefix));
}

int srv_test_hook(const char *point, const char *detail)
{
    if (!strcmp(point, "idempotency-answer") && prefixed("PERFCAST_TEST_KILL_ANSWER", detail))
        raise(SIGKILL);
    if (!strcmp(point, "idempotency-fail"))
        return prefixed("PERFCAST_TEST_FAIL_ANSWER", detail);
    if (!strcmp(point, "search-request")) {
        const char *text = getenv("PERFCAST_TEST_CRASH_SEARCH");
        if (text && *text && detail && strstr(detail, text))
            abort();
    }
    if (!strcmp(point, "search-run")) {
        if (armed("PERFCAST_TEST_KILL_SEARCH", detail))
            raise(SIGKILL);
        if (armed("PERFCAST_TEST_HOLD_SEARCH", detail))
            sleep(3);
    }
    return 0;
}

void srv_test_hooks_apply(api_ctx *api)
{
    api->test_hook = srv_test_hook;
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

int srv_test_hook(const char *point, const char *detail)
{
    (void)point;
    (void)detail;
    return 0;
}

void srv_test_hooks_apply(api_ctx *api)
{
    (void)api;
}
#endif
