/*
 * version.h — perfcast's version, printed by `perfcast --version` and in
 * GET /health, and the OpenAPI document's info.version.
 */
#ifndef PERFCAST_COMMON_VERSION_H
#define PERFCAST_COMMON_VERSION_H

#define PERFCAST_VERSION "0.1.0"

#endif
