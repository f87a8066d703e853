/*
 * check.h — the test harness every tests/test_*.c includes.
 *
 * Each test program calls check() for every assertion and ends with
 * check_summary(), which prints "N passed, N failed" (tests/run.sh adds the
 * lines of all programs up) and returns the exit status.
 */
#ifndef PERFCAST_CHECK_H
#define PERFCAST_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int check_passed_count;
static int check_failed_count;

/* Records one assertion; on failure prints where and the formatted message. */
static void check_at(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), unused));
static void check_at(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        check_passed_count++;
        return;
    }
    check_failed_count++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

#define check(ok, ...) check_at((ok), __FILE__, __LINE__, __VA_ARGS__)

/* |got - want| <= rel * max(|want|, floor) */
static int check_close(double got, double want, double rel, double floor_)
    __attribute__((unused));
static int check_close(double got, double want, double rel, double floor_)
{
    double scale = fabs(want) > floor_ ? fabs(want) : floor_;
    return isfinite(got) && fabs(got - want) <= rel * scale;
}

static int check_summary(void) __attribute__((unused));
static int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_count, check_failed_count);
    return check_failed_count ? 1 : 0;
}

#endif
