/*
 * json.c — JSON text of response documents. Jansson prints reals with 17
 * significant digits (0.05 becomes 0.050000000000000003); responses carry
 * the shortest text that reads back as the same double instead
 * (common/numtext.h), so a price sent as 0.05 comes back as 0.05 and a
 * coefficient loses nothing. Non-finite reals, which JSON cannot express,
 * are written as null. Objects keep their insertion order. The text is
 * written by api/json_buf.c.
 */
#include "api/http.h"
#include "api/json_buf.h"

/* the writer itself is json_buf.c's, which large answers use directly */
char *api_json_text(const json_t *doc, size_t *len)
{
    jbuf b = {0};
    jbuf_value(&b, doc);
    return jbuf_take(&b, len);
}
