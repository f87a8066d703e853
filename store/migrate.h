/*
 * migrate.h — the migrations embedded in the binary. tools/embed.sh writes
 * the table from migrations/NNNN_name.sql into $(BUILD)/gen/migrations.c, in
 * version order; store/migrate.c applies it.
 */
#ifndef PERFCAST_STORE_MIGRATE_H
#define PERFCAST_STORE_MIGRATE_H

typedef struct store_migration {
    int version;      /* NNNN */
    const char *name; /* "NNNN_name" */
    const char *sql;  /* the whole file: several statements */
} store_migration;

extern const store_migration store_migrations[];
extern const int store_nmigrations;

#endif
