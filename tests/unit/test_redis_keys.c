/* The Redis source's key naming: the SCAN MATCH / PSUBSCRIBE pattern of a prefix
 * (rs_key_pattern, src/sources/redis_sweep.c) and a key's task id (rs_task_id,
 * src/sources/redis_fetch.c). */
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/redis_fetch.h"
#include "../../src/sources/redis_sweep.h"
#include "check.h"

int main(void)
{
    static const struct { const char *prefix, *want; } pat[] = {
        { "alakai-executions", "alakai-executions:*" },
        { "a*b?c", "a\\*b\\?c:*" },                  /* glob characters escaped */
        { "[x]\\y", "\\[x\\]\\\\y:*" },
        { "", ":*" },
    };
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++) {
        char *got = rs_key_pattern(pat[i].prefix);
        CHECK_STR(got, pat[i].want);
        free(got);
    }
    char long_key[300];
    memset(long_key, 'x', sizeof long_key);
    memcpy(long_key, "p:", 2);
    const struct { const char *prefix, *key; size_t len; const char *want; } ids[] = {
        { "p", "p:t1", 4, "t1" },
        { "p", "p:", 2, NULL },                      /* no id */
        { "p", "q:t1", 4, NULL },                    /* another prefix */
        { "p", "pp:t1", 5, NULL },
        { "p", "p-t1", 4, NULL },                    /* no colon after the prefix */
        { "a*", "a*:x:y", 6, "x:y" },                /* the id keeps its colons */
        { "p", long_key, 2 + 255, "" },              /* 255 bytes: the longest id */
        { "p", long_key, 2 + 256, NULL },
    };
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        size_t idlen = 0;
        const char *id = rs_task_id(ids[i].prefix, ids[i].key, ids[i].len, &idlen);
        if (!ids[i].want) {
            CHECK_MSG(id == NULL, ids[i].key);
        } else if (!*ids[i].want) {
            CHECK_MSG(id == ids[i].key + 2 && idlen == 255, "255-byte id");
        } else {
            char buf[64] = "";
            if (id)
                snprintf(buf, sizeof buf, "%.*s", (int)idlen, id);
            CHECK_STR(id ? buf : NULL, ids[i].want);
        }
    }
    return check_done("redis_keys");
}
