#pragma once
/* The queries a PostgreSQL batch may carry, by kind; pg_qnames[k] is the profile's name of
 * kind k ([query NAME], docs/profiles.md). Shared by the PostgreSQL source's files. */

#define SRC_NAME "postgresql"   /* the model's name of the source */

/* At most MAX_Q queries in one batch. */
enum { MAX_Q = 24 };

typedef enum {
    Q_SEARCH_PATH, Q_VARIANT, Q_EXTENSIONS, Q_COUNTS, Q_EXECS, Q_WORKERS, Q_QUEUES,
    Q_DLQ_COUNT, Q_FAILING, Q_CHAIN, Q_DLQ, Q_LOOKUP, Q_INDEXES, Q_CHANGES, Q_PREPARE,
    Q_SETTING, Q_REPLICA, Q_RUNNING, Q_LISTEN, Q_GROUPS, Q_DETAIL, Q_DLQ_GROUPS, Q_GROUPS_WINDOW, Q_N
} qkind;

extern const char *const pg_qnames[Q_N];
