/* What a batch record is bound to (session/session_bound.c, issue 35): the store and the
 * core a system's config points at, in words to compare, never a credential. The
 * PostgreSQL stores here do not answer (port 1): the conninfo's address is the fallback. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../src/core/xalloc.h"
#include "../../src/session/session.h"

static char *store_of(const char *url, const char *kind)
{
    rd_system_cfg c;
    memset(&c, 0, sizeof c);
    c.store.url = url ? xstrdup(url) : NULL;
    char *out = session_store_identity(&c, kind);
    free(c.store.url);
    return out;
}

static void check_store(const char *url, const char *kind, const char *want)
{
    char *got = store_of(url, kind);
    CHECK_STR(got, want);
    CHECK(!got || !strstr(got, "secret"));
    free(got);
}

int main(void)
{
    check_store("host=127.0.0.1 port=1 dbname=jobs user=u password=secret connect_timeout=2",
                "postgresql", "postgresql://127.0.0.1:1/jobs (the store did not answer)");
    check_store("postgresql://u:secret@127.0.0.1:1/db2?connect_timeout=2", "postgresql",
                "postgresql://127.0.0.1:1/db2 (the store did not answer)");
    check_store("redis://user:secret@cache:6380/3", "redis", "redis://cache:6380/3");
    check_store("redis://cache:6379", "redis", "redis://cache:6379/0");
    check_store("rediss://:secret@cache:6379/", "redis", "rediss://cache:6379/0");
    check_store("cmd:echo redis://h:1/2", "redis", NULL);     /* a command is not run here */
    setenv("RD_TEST_BOUND_STORE", "redis://:secret@h:1/2", 1);
    check_store("env:RD_TEST_BOUND_STORE", "redis", "redis://h:1/2");
    check_store(NULL, "redis", NULL);

    rd_system_cfg c;
    memset(&c, 0, sizeof c);
    char q[] = "https://sqs.eu-west-1.amazonaws.com/123/jobs", r[] = "redis://q:6379/1",
         core[] = "https://user:secret@core.example:8443/api?x=1#f";
    c.sqs.queue_url = q;
    char *s = session_store_identity(&c, "redis");
    CHECK_STR(s, "sqs=https://sqs.eu-west-1.amazonaws.com/123/jobs");
    free(s);
    c.store.url = r;
    s = session_store_identity(&c, "redis");
    CHECK_STR(s, "redis://q:6379/1 sqs=https://sqs.eu-west-1.amazonaws.com/123/jobs");
    free(s);

    c.core.url = core;
    s = session_core_identity(&c);
    CHECK_STR(s, "https://core.example:8443/api");
    free(s);
    c.core.url = NULL;
    CHECK(session_core_identity(&c) == NULL);
    return check_done("session_bound");
}
