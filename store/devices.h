/*
 * devices.h — a tenant's GPU devices in PostgreSQL (migration 0015), beside
 * the built-in catalog of execgraph/xg_device.h: the device travels as its
 * JSON document (api/iteration.h renders and validates it); here it is
 * stored, listed, fetched by name and deleted, always within one tenant.
 */
#ifndef PERFCAST_STORE_DEVICES_H
#define PERFCAST_STORE_DEVICES_H

#include <stdint.h>

#include "store/db.h"

typedef struct store_device {
    int64_t id;
    char name[64];
    char created_at[40];
    char *doc;           /* JSON text */
} store_device;

/* A new device; a name the tenant already uses -> STORE_CONFLICT. */
int store_devices_create(PGconn *c, int64_t tenant, const char *name, const char *doc,
                         store_device *out, store_error *err);
/* By name (case-insensitive); STORE_NOT_FOUND when the tenant has none. */
int store_devices_get_by_name(PGconn *c, int64_t tenant, const char *name, store_device *out,
                              store_error *err);
/* The tenant's devices by id; free with store_devices_free. */
int store_devices_list(PGconn *c, int64_t tenant, store_device **out, int *n, store_error *err);
int store_devices_delete(PGconn *c, int64_t tenant, int64_t id, store_error *err);
void store_device_free(store_device *d);
void store_devices_free(store_device *d, int n);

#endif
