/*
 * test_hooks.h — faults that only a test build can inject.
 *
 * The production perfcast links test_hooks.c compiled without
 * PERFCAST_TEST_HOOKS, where these do nothing, so nothing there can make it
 * fault. The Makefile also builds $(BUILD)/tests/perfcast-hooks from the
 * same objects with this file compiled with PERFCAST_TEST_HOOKS; in that
 * binary, and only there, the environment arms them:
 *
 *   PERFCAST_TEST_CRASH_CALLPATH=NAME  the refit abort()s when it is about
 *       to fit callpath NAME (how tests/test_api_numeric.c crashes a worker:
 *       no input crashes one any more);
 *   PERFCAST_TEST_KILL_CALLPATH=NAME   the same with SIGKILL, which no
 *       handler sees (the crash record must already be durable);
 *   PERFCAST_TEST_KILL_ANSWER=PREFIX   SIGKILL after the handler of a request
 *       whose Idempotency-Key starts with PREFIX committed, before its
 *       answer is kept or sent (api/idempotency.c);
 *   PERFCAST_TEST_FAIL_ANSWER=PREFIX   the answer of such a request is
 *       replaced by a 500 after its handler committed, before the answer is
 *       kept (api/idempotency.c): a 5xx that follows a commit;
 *   PERFCAST_TEST_IDEMPOTENCY_LOCK=S   a pending Idempotency-Key is held S
 *       seconds instead of 300, so that a test sees it run out;
 *   PERFCAST_TEST_KILL_SEARCH=KIND     SIGKILL when a job worker has claimed
 *       a queued search run of that kind (configurations, advice), before
 *       it searches (api/search_runs.c);
 *   PERFCAST_TEST_CRASH_SEARCH=TEXT   abort() when a job worker has claimed
 *       a queued search run whose stored request contains TEXT, before it
 *       searches: the crash handler (server/crash.h) must record it failed;
 *   PERFCAST_TEST_HOLD_SEARCH=KIND     such a run is held 3 s, its lease
 *       renewed, before it searches, so that a test finds it running.
 * tests/faults.c and tests/test_api_numeric.c use them.
 */
#ifndef PERFCAST_SERVER_TEST_HOOKS_H
#define PERFCAST_SERVER_TEST_HOOKS_H

#include "api/api.h"

/* Called by the workers before each step of a refit (pipeline/refit.h). */
void srv_test_hook_fit(const char *step, const char *callpath);

/* The named points of requests and of queued runs: nonzero when the test
 * build is told to fail there (the kills never return); always 0 in the
 * production build. */
int srv_test_hook(const char *point, const char *detail);

/* Arms the request hooks of api (api->test_hook, api->idempotency_lock);
 * nothing in the production build. */
void srv_test_hooks_apply(api_ctx *api);

#endif
