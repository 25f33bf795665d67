#pragma once
/*
 * The reply constructors of the Redis source's main connection (redis_reply.c): hiredis
 * 0.14 builds a reply through a table of functions; these wrap the defaults so that a
 * hostile or broken server costs bounded memory. Owned by the connection (redis_conn.c),
 * read by the fetches (redis_fetch.c).
 *
 * A string reply over RS_RECORD_CAP arrives empty (len 0, str "") with its true length in
 * ->integer; an array keeps at most RS_REPLY_ELEMENTS elements (rs_reply_count: its true
 * element count).
 */
#include <stddef.h>

#include <hiredis/read.h>

struct redisReply;

enum {
    RS_CHAIN_MAX_FIELDS = 1000,     /* attempt fields read for a chain */
    RS_RECORD_CAP = 1 << 20,        /* records above 1 MiB: dropped unread (sweeps), never
                                       fetched (chains) */
    RS_REPLY_ELEMENTS = 2 * RS_CHAIN_MAX_FIELDS, /* elements built per array reply (the
                                       rest are read past) */
};

typedef struct rs_reader {          /* a reader's constructors: the defaults, and ours */
    const redisReplyObjectFunctions *defaults;
    redisReplyObjectFunctions fns;
} rs_reader;

/* Makes rd build its replies through r (which must outlive rd). */
void rs_reply_hook(rs_reader *r, redisReader *rd);
size_t rs_reply_count(const struct redisReply *r);
