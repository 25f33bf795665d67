#include "views.h"

#include <stdio.h>
#include <string.h>

enum { ARRAYS = VPART_COUNTS | VPART_EXECS | VPART_WORKERS | VPART_QUEUES };

static const rd_view views[] = {
    { "overview", VPART_SOURCES | ARRAYS, false, false, true,
      "counts, executions, workers and queues (the default)" },
    { "executions", VPART_SOURCES | VPART_EXECS, false, true, true, "the loaded executions" },
    { "chain", VPART_SOURCES | VPART_CHAIN, true, true, true, "one execution's retry chain (ID)" },
    { "execution", VPART_SOURCES | VPART_DETAIL, true, false, true,
      "one execution in full: error, backtrace, parameters, result (ID)" },
    { "workers", VPART_SOURCES | VPART_WORKERS, false, true, true, "workers and their health" },
    { "queues", VPART_SOURCES | VPART_QUEUES, false, true, true, "queues, depths and rates" },
    { "dlq", VPART_SOURCES | VPART_DLQ, false, true, true, "dead-letter messages (peeked)" },
    { "groups", VPART_SOURCES | VPART_GROUPS, false, true, true, "failed executions by error fingerprint" },
    { "fleet", 0, false, false, true, "every configured system, one row each" },
    { "history", VPART_HISTORY, false, false, true, "the last hour: failures, DLQ, backlog (the console's samples)" },
    /* fixtures: every loaded array */
    { "all", VPART_SOURCES | ARRAYS | VPART_DLQ | VPART_CHAIN, false, false, false, NULL },
    /* the last-known snapshot file (session/snapcache.h): no sources, no DLQ */
    { "cache", ARRAYS, false, false, false, NULL },
};

const rd_view *view_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof views / sizeof *views; i++)
        if (strcmp(name, views[i].name) == 0)
            return &views[i];
    return NULL;
}

const rd_view *view_at(size_t i)
{
    return i < sizeof views / sizeof *views ? &views[i] : NULL;
}

void view_names(char *buf, size_t cap, bool export_only)
{
    size_t used = 0;
    if (!cap)
        return;
    buf[0] = '\0';
    const rd_view *v;
    for (size_t i = 0; (v = view_at(i)); i++) {
        if (!v->listed || (export_only && !v->exportable))
            continue;
        int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", v->name);
        if (n < 0 || (size_t)n >= cap - used) {
            buf[used] = '\0';             /* whole names only */
            return;
        }
        used += (size_t)n;
    }
}
