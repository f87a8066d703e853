/*
 * commits.c — validity of commit, branch and CI-run names (commits.h).
 */
#include "api/commits.h"

#include <string.h>

int api_tag_valid(const char *v, int is_commit)
{
    if (!v)
        return 0;
    size_t n = strlen(v), max = is_commit ? 100 : 200;
    if (n < 1 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v[i];
        int ok = is_commit ? (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
                                 (ch >= 'A' && ch <= 'Z') || (ch && strchr("._/-", ch))
                           : ch >= 0x20 && ch != 0x7f;
        if (!ok)
            return 0;
    }
    return 1;
}
