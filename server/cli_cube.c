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
#include <jansson.h>
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

/* `perfcast ingest DIR`: what perfcast reads of a Cube profile set — its
 * parameters, points, callpaths, metrics and values per point — as text or
 * one JSON document ({"format":"cube-set","parameters","points","callpaths",
 * "metrics","values_per_point":{"min","max"},"skipped"}). 0, or 2 (said). */
int cli_cube_set_summary(const char *dir, int as_json)
{
    ingest_experiment e;
    char *skipped = NULL, err[1024];
    if (cli_read_cube_set(dir, &e, &skipped, err, sizeof err) < 0) {
        fprintf(stderr, "perfcast ingest: %s\n", err);
        return 2;
    }
    int vmin = 0, vmax = 0;
    for (int i = 0; i < e.nseries; i++)
        for (int j = 0; j < e.series[i].npoints; j++) {
            int n = e.series[i].rep_start[j + 1] - e.series[i].rep_start[j];
            vmin = !vmin || n < vmin ? n : vmin;
            vmax = n > vmax ? n : vmax;
        }
    json_t *doc = json_object(), *params = json_array(), *points = json_array(),
           *cps = json_array(), *ms = json_array(), *sk = json_array();
    for (int i = 0; i < e.nparams; i++)
        json_array_append_new(params, json_string(e.params[i]));
    for (int c = 0; c < e.ncoords; c++) {
        json_t *pt = json_array();
        for (int i = 0; i < e.nparams; i++)
            json_array_append_new(pt, json_real(e.coords[(size_t)c * e.nparams + i]));
        json_array_append_new(points, pt);
    }
    for (int i = 0; i < e.ncallpaths; i++)
        json_array_append_new(cps, json_string(e.callpaths[i]));
    for (int i = 0; i < e.nmetrics; i++)
        json_array_append_new(ms, json_string(e.metrics[i]));
    for (char *p = skipped; p && *p;) {
        size_t l = strcspn(p, ",");
        json_array_append_new(sk, json_stringn(p, l));
        p += l;
        while (*p == ',' || *p == ' ')
            p++;
    }
    if (as_json) {
        json_object_set_new(doc, "format", json_string("cube-set"));
        json_object_set_new(doc, "parameters", params);
        json_object_set_new(doc, "points", points);
        json_object_set_new(doc, "callpaths", cps);
        json_object_set_new(doc, "metrics", ms);
        json_object_set_new(doc, "values_per_point", json_pack("{s:i,s:i}", "min", vmin, "max", vmax));
        json_object_set_new(doc, "skipped", sk);
        json_dumpf(doc, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        putchar('\n');
    } else {
        char *pj = json_dumps(params, JSON_COMPACT), *mj = json_dumps(ms, JSON_COMPACT);
        printf("%s: Cube profile set\n  parameters %s, %d points\n  %d callpaths, metrics %s\n"
               "  values per point (runs x locations): %d to %d\n",
               dir, pj ? pj : "", e.ncoords, e.ncallpaths, mj ? mj : "", vmin, vmax);
        if (skipped)
            printf("  skipped (no data): %s\n", skipped);
        free(pj);
        free(mj);
        json_decref(params);
        json_decref(points);
        json_decref(cps);
        json_decref(ms);
        json_decref(sk);
    }
    json_decref(doc);
    free(skipped);
    ingest_experiment_free(&e);
    return 0;
}
