/* The sweep's keys read ahead (redis_keyq.h). */
#include "redis_keyq.h"

#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"

struct rs_keyq {
    char *buf;                       /* keys back to back, each NUL-terminated */
    size_t used, cap;
    size_t *at;                      /* each key's offset in buf */
    size_t n, head, acap;            /* keys pushed, popped (head), room */
};

rs_keyq *rs_keyq_new(void)
{
    return xcalloc(1, sizeof(rs_keyq));
}

void rs_keyq_free(rs_keyq *q)
{
    if (!q)
        return;
    free(q->buf);
    free(q->at);
    free(q);
}

void rs_keyq_clear(rs_keyq *q)
{
    q->used = q->n = q->head = 0;
}

/* Drop the popped keys from the front, once they are half of it: the buffer stays about
 * the size of the keys waiting, however long the sweep. */
static void compact(rs_keyq *q)
{
    if (q->head == 0 || q->head * 2 < q->n)
        return;
    size_t from = q->head < q->n ? q->at[q->head] : q->used;
    memmove(q->buf, q->buf + from, q->used - from);
    for (size_t i = q->head; i < q->n; i++)
        q->at[i - q->head] = q->at[i] - from;
    q->used -= from;
    q->n -= q->head;
    q->head = 0;
}

void rs_keyq_push(rs_keyq *q, const char *key, size_t len)
{
    compact(q);
    xgrow(&q->buf, &q->cap, q->used + len + 1, 1);
    xgrow(&q->at, &q->acap, q->n + 1, sizeof *q->at);
    memcpy(q->buf + q->used, key, len);
    q->buf[q->used + len] = '\0';
    q->at[q->n++] = q->used;
    q->used += len + 1;
}

const char *rs_keyq_pop(rs_keyq *q, size_t *len)
{
    if (q->head == q->n)
        return NULL;
    size_t i = q->head++;
    size_t end = i + 1 < q->n ? q->at[i + 1] : q->used;
    *len = end - q->at[i] - 1;
    return q->buf + q->at[i];
}

size_t rs_keyq_len(const rs_keyq *q)
{
    return q->n - q->head;
}

size_t rs_keyq_memory(const rs_keyq *q)
{
    return q->cap + q->acap * sizeof *q->at;
}
