/*
 * cli_file.c — reading a whole input file for the offline subcommands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/commands.h"

int cli_read_file(const char *path, char **buf, size_t *len, char *err, size_t errcap)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = cap > ((size_t)1 << 40) ? NULL : realloc(b, cap * 2);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    int failed = !b || ferror(f);
    if (f != stdin)
        fclose(f);
    if (failed) {
        free(b);
        snprintf(err, errcap, "%s: cannot read the file", path);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}
