/*
 * cli_cube.c — a Cube profile set on disk for the offline subcommands.
 *
 * A set is a directory whose subdirectories are runs ("mm.x10y1z1.r1/"),
 * each holding one or more .cubex files whose names do not start with '.'
 * (Extra-P's glob "* /[!.]*.cubex"); other files and directories without a
 * .cubex are ignored, as Extra-P does. Subdirectories are read in name order.
 * Each file goes through ingest/cube.h; a fault names the file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/cube.h"
#include "server/commands.h"

int cli_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries that pass keep(); NULL-terminated. */
static char **list_dir(const char *dir, int (*keep)(const char *dir, const char *name), int *n)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d)
        return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *de;
    int bad = 0;
    while ((de = readdir(d))) {
        if (!keep(dir, de->d_name))
            continue;
        if ((size_t)*n + 1 >= cap) {
            cap = cap ? cap * 2 : 32;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                bad = 1;
                break;
            }
            v = nv;
        }
        if (!(v[*n] = strdup(de->d_name))) {
            bad = 1;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (bad) {
        for (int i = 0; i < *n; i++)
            free(v[i]);
        free(v);
        *n = -1;
        return NULL;
    }
    if (v)
        qsort(v, (size_t)*n, sizeof *v, name_cmp);
    return v;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int keep_subdir(const char *dir, const char *name)
{
    if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
        return 0;
    char p[4096];
    snprintf(p, sizeof p, "%.3000s/%.1000s", dir, name);
    return cli_is_dir(p);
}

static int keep_cubex(const char *dir, const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.' || n < 7 || strcmp(name + n - 6, ".cubex"))
        return 0;
    char p[4096];
    snprintf(p, sizeof p, "%.3000s/%.1000s", dir, name);
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int cli_read_cube_set(const char *dir, ingest_experiment *out, char **skipped, char *err,
                      size_t errcap)
{
    memset(out, 0, sizeof *out);
    *skipped = NULL;
    int nsub;
    char **subs = list_dir(dir, keep_subdir, &nsub);
    if (nsub < 0) {
        snprintf(err, errcap, "%s: out of memory", dir);
        return -1;
    }
    cube_set *set = ingest_cube_set_new();
    int rc = set ? 0 : -1, files = 0;
    if (!set)
        snprintf(err, errcap, "%s: out of memory", dir);
    for (int i = 0; i < nsub && !rc; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%.2000s/%.1000s", dir, subs[i]);
        int nf;
        char **fs = list_dir(sub, keep_cubex, &nf);
        for (int j = 0; j < nf && !rc; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%.3000s/%.1000s", sub, fs[j]);
            cli_file in;
            char ferr[512];
            if (cli_file_open(path, &in, ferr, sizeof ferr) < 0) {
                snprintf(err, errcap, "%s", ferr);
                rc = -1;
                break;
            }
            cube_profile p;
            ingest_error ie;
            if (ingest_cube_read(in.data, in.len, NULL, &p, &ie) < 0 ||
                ingest_cube_set_add(set, subs[i], &p, &ie) < 0) {
                snprintf(err, errcap, "%.3800s: %s", path, ie.msg);
                rc = -1;
            }
            cube_profile_free(&p);
            cli_file_close(&in);
            files++;
        }
        free_list(fs, nf > 0 ? nf : 0);
    }
    if (!rc && files == 0) {
        snprintf(err, errcap, "%s: no run directory with a .cubex file (expected e.g. "
                 "%s/mm.x10y1z1.r1/profile.cubex)", dir, dir);
        rc = -1;
    }
    if (!rc) {
        ingest_error ie;
        if (ingest_cube_set_finish(set, out, &ie) < 0) {
            snprintf(err, errcap, "%s: %s", dir, ie.msg);
            rc = -1;
        } else if (*ingest_cube_set_skipped(set)) {
            *skipped = strdup(ingest_cube_set_skipped(set));
        }
    }
    ingest_cube_set_free(set);
    free_list(subs, nsub);
    return rc;
}
