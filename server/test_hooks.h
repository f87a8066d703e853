/*
 * test_hooks.h — faults that only a test build can inject.
 *
 * The production perfcast links test_hooks.c compiled without
 * PERFCAST_TEST_HOOKS, where srv_test_hook_fit() does nothing, so nothing
 * there can make it fault. The Makefile also builds
 * $(BUILD)/tests/perfcast-hooks from the same objects with this file
 * compiled with PERFCAST_TEST_HOOKS; in that binary, and only there,
 * PERFCAST_TEST_CRASH_CALLPATH=NAME makes the refit abort() when it is about
 * to fit callpath NAME, which is how tests/test_api_numeric.c crashes a
 * worker (no input crashes one any more).
 */
#ifndef PERFCAST_SERVER_TEST_HOOKS_H
#define PERFCAST_SERVER_TEST_HOOKS_H

/* Called by the workers before each step of a refit (pipeline/refit.h). */
void srv_test_hook_fit(const char *step, const char *callpath);

#endif
