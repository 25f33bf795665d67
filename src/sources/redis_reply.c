/*
 * The reply constructors of the main connection's reader (hiredis 0.14 builds a reply
 * through a table of functions; these wrap the defaults). A hostile or broken server
 * costs bounded memory, with one command per task still:
 *   - a string over RS_RECORD_CAP is not copied out of the read buffer (it would be
 *     dropped unread anyway: redis_fetch.c): an empty string whose integer holds the true
 *     length;
 *   - an array keeps at most RS_REPLY_ELEMENTS elements: the rest are parsed and passed
 *     over, never built (a task hash of 1,000,000 fields is ~200 MB of replies otherwise),
 *     and its integer holds the true count (rs_reply_count).
 * An element past the cap is represented by `dropped`, a static object that is never
 * linked into a reply, so hiredis never frees it; whatever nests inside it is dropped
 * too.
 */
#include "redis_reply.h"

#include <stdbool.h>

#include <hiredis/hiredis.h>

static redisReply dropped;

/* true when the object for task would sit past its parent's cap (or inside a dropped
 * element): not to be built. */
static bool past_cap(const redisReadTask *task)
{
    if (!task->parent)
        return false;
    const redisReply *p = task->parent->obj;
    return p == &dropped || (size_t)task->idx >= p->elements;
}

static const redisReplyObjectFunctions *defaults(const redisReadTask *task)
{
    const rs_reader *r = task->privdata;
    return r->defaults;
}

static void *reply_string(const redisReadTask *task, char *str, size_t len)
{
    if (past_cap(task))
        return &dropped;
    if (len <= RS_RECORD_CAP)
        return defaults(task)->createString(task, str, len);
    redisReply *r = defaults(task)->createString(task, str, 0);
    if (r)
        r->integer = (long long)len;
    return r;
}

static void *reply_array(const redisReadTask *task, int elements)
{
    if (past_cap(task))
        return &dropped;
    int kept = elements > RS_REPLY_ELEMENTS ? RS_REPLY_ELEMENTS : elements;
    redisReply *r = defaults(task)->createArray(task, kept);
    if (r)
        r->integer = elements;
    return r;
}

static void *reply_integer(const redisReadTask *task, long long value)
{
    return past_cap(task) ? &dropped : defaults(task)->createInteger(task, value);
}

static void *reply_nil(const redisReadTask *task)
{
    return past_cap(task) ? &dropped : defaults(task)->createNil(task);
}

void rs_reply_hook(rs_reader *r, redisReader *rd)
{
    r->defaults = rd->fn;
    r->fns = *rd->fn;
    r->fns.createString = reply_string;
    r->fns.createArray = reply_array;
    r->fns.createInteger = reply_integer;
    r->fns.createNil = reply_nil;
    rd->fn = &r->fns;
    rd->privdata = r;
}

size_t rs_reply_count(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY)
        return 0;
    return r->integer > 0 && (size_t)r->integer > r->elements ? (size_t)r->integer
                                                               : r->elements;
}
