/*
 * jsonb.h — reading back the JSON that PostgreSQL's jsonb columns return.
 *
 * jsonb keeps a number as numeric and prints it without an exponent: a
 * stored 1e19 comes back as 10000000000000000000 and 1e300 as an integer of
 * 301 digits, which Jansson refuses ("too big integer"), so a document the
 * service accepted could not be read back (every read of it answered 500).
 * jsonb_parse() reads such integers — those beyond json_int_t — as
 * reals (the same double the client sent: the digits are exact), and
 * everything else as json_loads() does. Use it for every text that came from
 * a jsonb column or a json(b) expression.
 */
#ifndef PERFCAST_COMMON_JSONB_H
#define PERFCAST_COMMON_JSONB_H

#include <jansson.h>

/* text parsed with json_loads(text, flags, NULL), integers that overflow
 * json_int_t read as reals. NULL for invalid JSON or no memory. */
json_t *jsonb_parse(const char *text, size_t flags);

#endif
