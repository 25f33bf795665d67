/* A batch record's items, streamed and checked (batchrec.h: batchrd_*, batchrec_check_items),
 * and the one way a record is opened for reading: below batchrec.c and batchscan.c, which
 * both read records. */
#include "batchrec_priv.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/xalloc.h"

struct rd_batchrd {
    FILE *f;
    char *line;
    size_t cap, next, lineno;
    cJSON *cur;
    char damage[128];          /* "" while every item read so far is sound */
};

FILE *batchrec_open_private(const char *path, const char *what, char *why, size_t whycap)
{
    int fd = fsperm_open(path, O_RDONLY | O_NOFOLLOW, 0, what, FSP_REGULAR, NULL, why, whycap);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    return f;
}

/* ---- the items, streamed ------------------------------------------------------------ */

rd_batchrd *batchrd_open(const char *path, char *why, size_t whycap)
{
    FILE *f = batchrec_open_private(path, "batch record", why, whycap);
    if (!f)
        return NULL;
    rd_batchrd *r = xcalloc(1, sizeof *r);
    r->f = f;
    return r;
}

/* An item's string: null (NULL, *ok kept) or a string; a target's (id, parent: it goes into
 * a request's path) of 1..512 bytes without a control character. Else *ok = false. An
 * empty fingerprint is none; a fingerprint is any text (an error's: sanitized wherever it
 * is shown). */
static const char *item_str(const cJSON *a, int i, bool target, bool *ok)
{
    const cJSON *x = cJSON_GetArrayItem(a, i);
    if (cJSON_IsNull(x))
        return NULL;
    const char *s = cJSON_IsString(x) ? x->valuestring : NULL;
    size_t len = s ? strlen(s) : 0;
    for (size_t k = 0; target && s && k < len; k++)
        if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f)
            s = NULL;
    if (!s || (target && (len == 0 || len > 512)))
        *ok = false;
    return s && len ? s : NULL;
}

/* The item line in r->cur, checked into t; false with r->damage. */
static bool item_read(rd_batchrd *r, size_t i, rd_target *t)
{
    bool ok = cJSON_IsArray(r->cur) && cJSON_GetArraySize(r->cur) == 5;
    const cJSON *at = cJSON_GetArrayItem(r->cur, 3);
    double n = cJSON_IsNumber(at) ? at->valuedouble : -1;
    *t = (rd_target){.id = item_str(r->cur, 0, true, &ok),
                     .parent = item_str(r->cur, 1, true, &ok),
                     .fp = item_str(r->cur, 2, false, &ok)};
    const char *ov = item_str(r->cur, 4, false, &ok);
    if (!ok || !t->id) {
        snprintf(r->damage, sizeof r->damage, "line %zu: item %zu cannot be read", r->lineno, i);
        return false;
    }
    if (!(n >= 0 && n <= 1e9 && n == (double)(int)n)) {
        snprintf(r->damage, sizeof r->damage, "line %zu: item %zu: its attempt is not a count",
                 r->lineno, i);
        return false;
    }
    t->attempt = (int)n;
    /* the journal's override names are static strings (guard.h): keep them so */
    t->override_ = !ov ? NULL : !strcmp(ov, "ineligible") ? "ineligible"
                 : !strcmp(ov, "loop_retry") ? "loop_retry" : NULL;
    return true;
}

bool batchrd_next(rd_batchrd *r, size_t *item, rd_target *t)
{
    cJSON_Delete(r->cur);
    r->cur = NULL;
    ssize_t len;
    while (!r->damage[0] && (len = getline(&r->line, &r->cap, r->f)) > 0) {
        r->lineno++;
        if (r->line[0] != '[')
            continue;
        r->cur = cJSON_ParseWithLength(r->line, (size_t)len);
        size_t i = r->next++;
        if (!item_read(r, i, t))
            break;
        *item = i;
        return true;
    }
    return false;
}

const char *batchrd_damage(const rd_batchrd *r)
{
    return r->damage;
}

void batchrd_close(rd_batchrd *r)
{
    if (!r)
        return;
    cJSON_Delete(r->cur);
    fclose(r->f);
    free(r->line);
    free(r);
}

bool batchrec_check_items(const rd_batch_info *b, char *why, size_t whycap)
{
    rd_batchrd *r = batchrd_open(b->path, why, whycap);
    if (!r)
        return false;
    size_t item, n = 0;
    rd_target t;
    while (batchrd_next(r, &item, &t))
        n++;
    bool ok = !r->damage[0] && n == b->total;
    if (r->damage[0])
        snprintf(why, whycap, "batch record %s is damaged: %s", b->path, r->damage);
    else if (!ok)
        snprintf(why, whycap, "batch record %s is damaged: %zu items, not %zu", b->path, n,
                 b->total);
    batchrd_close(r);
    return ok;
}
