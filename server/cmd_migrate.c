/*
 * cmd_migrate.c — `perfcast migrate`: applies the migrations compiled into
 * the binary to DATABASE_URL and exits. `perfcast serve` does the same at
 * start (srv_migrate), so running this first is optional; it is for
 * deployments that migrate in a separate step.
 */
#include <stdio.h>

#include "server/commands.h"
#include "server/config.h"

int srv_migrate(srv_log *log, store *db, int quiet)
{
    store_error err;
    int before = 0, after = 0;
    int rc = store_schema_version(db, &before, &err);
    if (!rc)
        rc = store_migrate(db, &err);
    if (!rc)
        rc = store_schema_version(db, &after, &err);
    if (rc == STORE_UNAVAILABLE) {
        if (!quiet)
            srv_logf(log, SRV_LOG_WARN, "database unavailable", "{s:s}", "error", err.msg);
        return 0;
    }
    if (rc) {
        srv_logf(log, SRV_LOG_ERROR, "migration failed", "{s:s}", "error", err.msg);
        return -1;
    }
    srv_logf(log, SRV_LOG_INFO, before == after ? "schema current" : "schema migrated",
             "{s:i, s:i}", "from_version", before, "version", after);
    return 1;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: perfcast migrate [--database-url URL] [--log-level LEVEL]\n"
                "Applies pending migrations to the database (DATABASE_URL) and exits.\n");
}

int cmd_migrate(int argc, char **argv)
{
    srv_config cfg;
    char err[512];
    int rc = srv_config_load(&cfg, argc, argv, err, sizeof err);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "perfcast migrate: %s\n", err);
        usage(stderr);
        return 2;
    }
    srv_log log;
    srv_log_init(&log, stderr, cfg.log_level);
    store *db = store_open(cfg.database_url, 1);
    /* an unreachable database is said in one plain line, not a log record */
    int done = db ? srv_migrate(&log, db, 1) : -1;
    if (done == 0) {
        store_error e;
        int v;
        if (store_schema_version(db, &v, &e))
            fprintf(stderr, "perfcast migrate: %s\n", e.msg);
        else
            fprintf(stderr, "perfcast migrate: the database is unavailable\n");
    }
    store_close(db);
    srv_log_destroy(&log);
    return done == 1 ? 0 : 1;
}
