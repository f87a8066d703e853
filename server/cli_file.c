/*
 * cli_file.c — reading a whole input file for the offline subcommands.
 * Regular files are mapped read-only (no copy, no zeroed pages to fill);
 * pipes and stdin are read into a growing buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/commands.h"

static int read_stream(int fd, cli_file *f)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(b);
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
    }
    if (!b)
        return -1;
    f->data = b;
    f->len = n;
    f->mapped = 0;
    return 0;
}

int cli_file_open(const char *path, cli_file *f, char *err, size_t errcap)
{
    memset(f, 0, sizeof *f);
    int fd = strcmp(path, "-") ? open(path, O_RDONLY) : STDIN_FILENO;
    if (fd < 0) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = -1, have_stat = fstat(fd, &st) == 0;
    if (have_stat && S_ISDIR(st.st_mode)) {
        snprintf(err, errcap, "%s: is a directory", path);
        if (fd != STDIN_FILENO)
            close(fd);
        return -1;
    }
    if (have_stat && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            f->data = m;
            f->len = (size_t)st.st_size;
            f->mapped = 1;
            rc = 0;
        }
    }
    if (rc < 0)
        rc = read_stream(fd, f);
    if (fd != STDIN_FILENO)
        close(fd);
    if (rc < 0)
        snprintf(err, errcap, "%s: cannot read the file", path);
    return rc;
}

void cli_file_close(cli_file *f)
{
    if (f->mapped)
        munmap(f->data, f->len);
    else
        free(f->data);
    memset(f, 0, sizeof *f);
}
