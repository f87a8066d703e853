/*
 * utf8.h — well-formed UTF-8, one sequence at a time (RFC 3629: no overlong
 * forms, no surrogates, nothing beyond U+10FFFF). The readers of uploads
 * and the request log check their text with it.
 */
#ifndef PERFCAST_UTF8_H
#define PERFCAST_UTF8_H

/* Length of the well-formed UTF-8 sequence at s (1 to 4), 0 when there is
 * none; s is NUL-terminated (a NUL ends a sequence short). */
int utf8_sequence(const unsigned char *s);

#endif
