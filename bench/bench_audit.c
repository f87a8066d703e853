/*
 * bench_audit.c — `make audit`: how many doubtful models and predictions on
 * Extra-P's own test data carry the coded warning that says so
 * (tests/audit.h has the checks).
 *
 *   bench_audit [DIR] [--list]
 *
 * DIR defaults to tests/data/extrap-audit. Prints one JSON line per
 * modeler and category ({"figure":"audit","modeler","category","problems",
 * "warned","silent"}), then the table on lines starting with "# "; --list
 * also names every silent problem (on stderr). Exits 1 when a file could not
 * be read or a fit failed, 0 otherwise: the counts are figures, the test
 * tests/test_audit.c is what fails on a silent problem.
 */
#include <stdio.h>
#include <string.h>

#include "tests/audit.h"

int main(int argc, char **argv)
{
    const char *dir = "tests/data/extrap-audit";
    int list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list"))
            list = 1;
        else
            dir = argv[i];
    }
    audit_result r;
    if (audit_run(dir, &r, list ? stderr : NULL) < 0) {
        fprintf(stderr, "bench_audit: out of memory\n");
        return 1;
    }
    static const char *const names[2] = {"extrap", "robust"};
    for (int mk = 0; mk < 2; mk++)
        for (int c = 0; c < AUDIT_NCAT; c++)
            printf("{\"figure\": \"audit\", \"modeler\": \"%s\", \"category\": \"%s\", "
                   "\"problems\": %d, \"warned\": %d, \"silent\": %d}\n",
                   names[mk], audit_category[c], r.c[mk][c].problems, r.c[mk][c].warned,
                   r.c[mk][c].silent);
    printf("# audit of %s: %d files, %d series, both modelers\n", dir, r.files, r.series);
    printf("# %-12s %28s %28s\n", "", "extrap: problems/warned/silent",
           "robust: problems/warned/silent");
    for (int c = 0; c < AUDIT_NCAT; c++)
        printf("# %-12s %18d/%d/%d %20d/%d/%d\n", audit_category[c], r.c[0][c].problems,
               r.c[0][c].warned, r.c[0][c].silent, r.c[1][c].problems, r.c[1][c].warned,
               r.c[1][c].silent);
    if (r.failed)
        printf("# %d files or fits failed\n", r.failed);
    return r.failed ? 1 : 0;
}
