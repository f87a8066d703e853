/*
 * commands.h — the subcommands of the perfcast executable and the small
 * helpers they share. Each cmd_* takes argv starting at the command name and
 * returns the exit status (0 ok, 1 failure, 2 invalid input or usage).
 */
#ifndef PERFCAST_COMMANDS_H
#define PERFCAST_COMMANDS_H

#include <stddef.h>

#include "ingest/extrap.h"

#include "server/log.h"
#include "store/db.h"

int cmd_model(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_sweep(int argc, char **argv);       /* cmd_sweep.c: sweep plan */
int cmd_sensitivity(int argc, char **argv); /* cmd_sweep.c */
int cmd_iteration(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_cicheck(int argc, char **argv);
int cmd_upload(int argc, char **argv);

/* Applies pending migrations and logs what happened (cmd_migrate.c).
 * Returns 1 when the schema is current, 0 when the database is unreachable
 * (try again later; logged unless quiet), -1 when a migration failed. */
int srv_migrate(srv_log *log, store *db, int quiet);

/* A whole input file, mapped or read into memory. */
typedef struct cli_file {
    char *data;
    size_t len;
    int mapped;
} cli_file;

/* Opens path ("-" is stdin). Returns 0, or -1 with a message in err. */
int cli_file_open(const char *path, cli_file *f, char *err, size_t errcap);
void cli_file_close(cli_file *f);

/* 1 when path is a directory (cli_cube.c). */
int cli_is_dir(const char *path);
/* Reads the Cube profile set in dir (runs in subdirectories named after
 * their parameters) into out. *skipped gets the metrics without data some
 * run skipped (free it; NULL when none). 0, or -1 with err naming the file. */
int cli_read_cube_set(const char *dir, ingest_experiment *out, char **skipped, char *err,
                      size_t errcap);
/* Prints what perfcast reads of the set in dir (`perfcast ingest DIR`);
 * 0, or 2 after saying what is wrong. */
int cli_cube_set_summary(const char *dir, int as_json);

#endif
