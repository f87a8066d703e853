/*
 * web.h — what api/web.c (the dashboard's static files) shares beyond its
 * handler (declared in handlers.h): the path check and the policy header,
 * for tests and the fuzz target.
 */
#ifndef PERFCAST_API_WEB_H
#define PERFCAST_API_WEB_H

/* 1 when every segment of rel (a decoded path without its leading '/') is a
 * plain name: not empty, not starting with a dot, no backslash, '%' or
 * control character; at most 200 bytes. */
int api_web_path_ok(const char *rel);

/* The Content-Security-Policy of every answer of the dashboard. */
extern const char api_web_csp[];

#endif
