/*
 * Table-driven unit tests of the broker sources' pure parts: Redis store URLs, Alakai
 * record decoding, the task index (hash table, sweeps, keyset paging) and the RabbitMQ
 * management API decoders. Registered as a meson test in src/sources/meson.build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/model.h"
#include "../../src/sources/rabbit_decode.h"
#include "../../src/core/xalloc.h"
#include "../../src/sources/redis_index.h"
#include "../../src/sources/redis_record.h"
#include "../../src/sources/redis_sweep.h"
#include "../../src/sources/redis_url.h"

static int failures;
#define CHECK(c) do { if (!(c)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_MSG(c, m) do { if (!(c)) { failures++; \
    fprintf(stderr, "%s:%d: CHECK(%s) failed [%s]\n", __FILE__, __LINE__, #c, m); } } while (0)

static void test_urls(void)
{
    static const struct { const char *url; bool ok; const char *host, *name, *path;
                          int port, db; bool dns, tls; const char *why; } t[] = {
        { "redis://127.0.0.1:6380/2", true, "127.0.0.1", "127.0.0.1", "", 6380, 2, false, false, "" },
        { "redis://127.0.0.1", true, "127.0.0.1", "127.0.0.1", "", 6379, 0, false, false, "" },
        { "redis://localhost:1/", true, "127.0.0.1", "localhost", "", 1, 0, false, false, "" },
        { "redis://[::1]:7000/3", true, "::1", "::1", "", 7000, 3, false, false, "" },
        { "redis://db.internal:6379/0", true, "db.internal", "db.internal", "", 6379, 0, true,
          false, "" },
        { "redis+unix:///run/redis.sock", true, "", "", "/run/redis.sock", 6379, 0, false,
          false, "" },
        { "redis+unix:///run/redis.sock?db=4", true, "", "", "/run/redis.sock", 6379, 4, false,
          false, "" },
        { "rediss://127.0.0.1/0", true, "127.0.0.1", "127.0.0.1", "", 6379, 0, false, true, "" },
        { "rediss://localhost:6380/1", true, "127.0.0.1", "localhost", "", 6380, 1, false,
          true, "" },
        { "rediss://cache.example.net:6380", true, "cache.example.net", "cache.example.net",
          "", 6380, 0, true, true, "" },
        { "rediss://[::1]:6380/0", true, "::1", "::1", "", 6380, 0, false, true, "" },
        { "redis+unix://relative", false, NULL, NULL, NULL, 0, 0, false, false, "absolute" },
        { "redis://u:p@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false, false,
          "credentials in the store URL are not supported" },
        { "rediss://:p@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false, false,
          "credentials" },
        { "redis://u:pa/ss@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false, false,
          "credentials" },
        { "redis://127.0.0.1:99999/0", false, NULL, NULL, NULL, 0, 0, false, false, "port" },
        { "redis://127.0.0.1/x", false, NULL, NULL, NULL, 0, 0, false, false, "database" },
        { "postgresql://x", false, NULL, NULL, NULL, 0, 0, false, false, "not a Redis URL" },
        { "http://127.0.0.1/", false, NULL, NULL, NULL, 0, 0, false, false, "not a Redis URL" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        rd_redis_url u;
        char err[300] = "";
        bool ok = redis_url_parse(t[i].url, &u, err, sizeof err);
        CHECK(ok == t[i].ok);
        CHECK(!u.user && !u.password);
        if (!ok) {
            CHECK(strstr(err, t[i].why) != NULL);
            CHECK(strstr(err, "pa/ss") == NULL && strstr(err, ":p@") == NULL);
            continue;
        }
        CHECK(strcmp(u.host, t[i].host) == 0);
        CHECK(strcmp(u.name, t[i].name) == 0);
        CHECK(strcmp(u.path, t[i].path) == 0);
        CHECK(u.port == t[i].port && u.db == t[i].db && u.needs_dns == t[i].dns);
        CHECK(u.tls == t[i].tls);
    }
}

/* URLs from a secret reference (store = env:REDIS_URL): credentials accepted. */
static void test_secret_urls(void)
{
    static const struct { const char *url; bool ok; const char *user, *pw, *host; int port, db;
                          bool tls; const char *why; } t[] = {
        { "redis://rd_ro:s3cret@127.0.0.1:6380/2", true, "rd_ro", "s3cret", "127.0.0.1", 6380,
          2, false, "" },
        { "rediss://rd_ro:s3cret@cache.example.net:6380/0", true, "rd_ro", "s3cret",
          "cache.example.net", 6380, 0, true, "" },
        { "redis://:only-pw@127.0.0.1/0", true, NULL, "only-pw", "127.0.0.1", 6379, 0, false, "" },
        { "redis://just-user@127.0.0.1/0", true, "just-user", NULL, "127.0.0.1", 6379, 0, false,
          "" },
        { "redis://user:@127.0.0.1/0", true, "user", NULL, "127.0.0.1", 6379, 0, false, "" },
        { "redis://127.0.0.1/0", true, NULL, NULL, "127.0.0.1", 6379, 0, false, "" },
        /* percent-encoded, and raw '/', '@', ':' inside the password (last '@' ends it) */
        { "redis://us%65r:p%40ss%2Fw%3Ard@127.0.0.1/0", true, "user", "p@ss/w:rd", "127.0.0.1",
          6379, 0, false, "" },
        { "redis://u:a/b@c:d@[::1]:7000/1", true, "u", "a/b@c:d", "::1", 7000, 1, false, "" },
        { "redis://u:bad%zzpw@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false,
          "bad percent-escape in the password" },
        { "redis://u:nul%00pw@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false,
          "percent-escape" },
        { "redis://u:trunc%4@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false,
          "percent-escape" },
        { "redis://u%zz:pw@127.0.0.1/0", false, NULL, NULL, NULL, 0, 0, false,
          "bad percent-escape in the user name" },
        { "redis://u:secretpw@127.0.0.1:0/0", false, NULL, NULL, NULL, 0, 0, false, "port" },
        { "redis://u:secretpw@127.0.0.1/x", false, NULL, NULL, NULL, 0, 0, false, "database" },
        { "redis+unix:///run/r.sock?db=1", true, NULL, NULL, "", 6379, 1, false, "" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        rd_redis_url u;
        char err[300] = "";
        bool ok = redis_url_parse_secret(t[i].url, &u, err, sizeof err);
        CHECK(ok == t[i].ok);
        if (!ok) {
            CHECK(strstr(err, t[i].why) != NULL);
            CHECK(strstr(err, "secretpw") == NULL && strstr(err, "pw@") == NULL);
            CHECK(!u.user && !u.password);     /* nothing left behind on failure */
            continue;
        }
        CHECK(t[i].user ? u.user && strcmp(u.user, t[i].user) == 0 : !u.user);
        CHECK(t[i].pw ? u.password && strcmp(u.password, t[i].pw) == 0 : !u.password);
        CHECK(strcmp(u.host, t[i].host) == 0);
        CHECK(u.port == t[i].port && u.db == t[i].db && u.tls == t[i].tls);
        redis_url_clear(&u);
        CHECK(!u.user && !u.password);
    }
}

static void test_records(void)
{
    static const struct { const char *json; bool ok; const char *status; int attempt;
                          double disp; const char *why; } t[] = {
        { "{\"status\":\"FAILED\",\"attempt\":2,\"dispatchedAt\":\"2026-01-01T00:00:00.500Z\"}",
          true, "failed", 2, 1767225600.5, "" },
        { "{\"status\":\"running\",\"dispatchedAt\":\"2026-01-01T02:00:00+02:00\"}",
          true, "running", -1, 1767225600, "" },
        { "{\"status\":\"running\",\"dispatchedAt\":1767225600000}", true, "running", -1,
          1767225600, "" },
        { "{\"status\":\"running\",\"dispatchedAt\":\"1767225600\"}", true, "running", -1,
          1767225600, "" },
        { "{\"status\":5}", false, "", -1, 0, "status has the wrong type" },
        { "{\"attempt\":1}", false, "", 1, 0, "no status" },
        { "{\"status\":\"failed\",\"attempt\":\"x\"}", false, "failed", -1, 0, "attempt" },
        { "{\"status\":\"failed\",\"errorMessage\":[1]}", false, "failed", -1, 0, "errorMessage" },
        { "{\"status\":\"failed\",\"dispatchedAt\":\"yesterday\"}", false, "failed", -1, 0,
          "dispatchedAt" },
        { "{\"status\":\"failed\"", false, "", -1, 0, "invalid JSON" },
        { "[1,2]", false, "", -1, 0, "not a JSON object" },
        { "{} trailing", false, "", -1, 0, "invalid JSON" },
        { "", false, "", -1, 0, "invalid JSON" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        rd_alakai_rec r;
        bool ok = alakai_rec_decode(t[i].json, strlen(t[i].json), &r);
        CHECK(ok == t[i].ok);
        CHECK(strcmp(r.status, t[i].status) == 0);
        CHECK(r.attempt == t[i].attempt);
        CHECK(r.dispatched_at == t[i].disp || !t[i].ok);
        CHECK(strstr(r.why, t[i].why) != NULL);
        alakai_rec_clear(&r);
        /* the scanner takes every JSON object here and reads what cJSON reads; it leaves
         * invalid JSON and non-objects to cJSON, whose message says where */
        bool object = !strstr(t[i].why, "invalid JSON") && !strstr(t[i].why, "not a JSON");
        rd_alakai_rec a, b;
        bool valid = false;
        bool took = alakai_rec_scan(t[i].json, strlen(t[i].json), &a, &valid);
        CHECK(took == object);
        if (took) {
            CHECK(alakai_rec_decode_tree(t[i].json, strlen(t[i].json), &b) == valid);
            CHECK(strcmp(a.status, b.status) == 0 && a.attempt == b.attempt);
            CHECK(strcmp(a.why, b.why) == 0 && a.dispatched_at == b.dispatched_at);
            alakai_rec_clear(&a);
            alakai_rec_clear(&b);
        }
    }
    /* one-character escapes are the scanner's; \u, fractions and a BOM are cJSON's */
    static const struct { const char *json; bool scanned; } esc[] = {
        { "{\"status\":\"failed\",\"attempt\":2,\"errorMessage\":\"said \\\"no\\\"\"}", true },
        { "{\"status\":\"failed\",\"attempt\":2,\"errorMessage\":\"said \\u0022no\\u0022\"}", false },
        { "{\"status\":\"failed\",\"attempt\":2.0,\"errorMessage\":\"said \\\"no\\\"\"}", false },
        { "\xEF\xBB\xBF{\"status\":\"failed\",\"attempt\":2,\"errorMessage\":\"said \\\"no\\\"\"}", false },
    };
    for (size_t i = 0; i < sizeof esc / sizeof *esc; i++) {
        rd_alakai_rec a;
        bool valid = false;
        bool took = alakai_rec_scan(esc[i].json, strlen(esc[i].json), &a, &valid);
        CHECK(took == esc[i].scanned);
        if (took) {
            CHECK(valid && a.attempt == 2 && strcmp(a.error, "said \"no\"") == 0);
            alakai_rec_clear(&a);
        }
        CHECK(alakai_rec_decode(esc[i].json, strlen(esc[i].json), &a));
        CHECK(a.attempt == 2 && strcmp(a.error, "said \"no\"") == 0);
        alakai_rec_clear(&a);
    }
    rd_alakai_rec r;                 /* numeric code, snapshot name, capped error */
    char big[3000];
    memset(big, 'e', sizeof big);
    char *json = malloc(4000);
    snprintf(json, 4000, "{\"status\":\"failed\",\"errorCode\":503,\"taskSnapshot\":"
             "{\"type\":\"render\"},\"errorMessage\":\"%.*s\"}", (int)sizeof big, big);
    CHECK(alakai_rec_decode(json, strlen(json), &r));
    CHECK(strcmp(r.code, "503") == 0 && strcmp(r.name, "render") == 0);
    CHECK(strlen(r.error) == RD_REC_ERROR_CAP - 1);
    alakai_rec_clear(&r);
    free(json);
    CHECK(alakai_field_num("1", 1) == 1 && alakai_field_num("42", 2) == 42);
    CHECK(alakai_field_num("0", 1) == -1 && alakai_field_num("-1", 2) == -1);
    CHECK(alakai_field_num("01", 2) == -1 && alakai_field_num("2x", 2) == -1);
    CHECK(alakai_field_num("latest", 6) == -1 && alakai_field_num("", 0) == -1);
}

static bool odd_only(const rix *ix, const rix_task *t, void *ud)
{
    (void)ud;
    rix_idbuf id;
    return atoi(rix_id(ix, t, &id) + 1) % 2 == 1;
}

static void test_index(void)
{
    enum { N = 5000 };
    rix *ix = rix_new(N);
    rix_idbuf ib;
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "t%d", i);
        rix_sum s = { .status = i % 3 ? "failed" : "running", .attempt = 1, .nfields = 1,
                      .error = i % 3 ? "boom 42" : NULL, .dispatched_at = 1000 + i / 2 };
        CHECK(rix_upsert(ix, id, strlen(id), &s));
    }
    CHECK(rix_size(ix) == N);
    rix_sum same = { .status = "failed", .attempt = 1, .nfields = 1, .error = "boom 42",
                     .dispatched_at = 1000 + 1 / 2 };
    CHECK(!rix_upsert(ix, "t1", 2, &same));           /* unchanged */
    for (int i = 0; i < N; i += 2) {                    /* remove evens (backward shift) */
        snprintf(id, sizeof id, "t%d", i);
        CHECK(rix_remove(ix, id, strlen(id)));
    }
    CHECK(rix_size(ix) == N / 2);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "t%d", i);
        const rix_task *t = rix_get(ix, id, strlen(id));
        CHECK((t != NULL) == (i % 2 == 1));
        if (t)
            CHECK(strcmp(rix_id(ix, t, &ib), id) == 0);
    }
    /* keyset paging covers every task once, newest first */
    uint32_t page[64];
    rix_cursor c = { 0 };
    size_t seen = 0;
    double last = 1e18;
    bool more = true;
    while (more) {
        size_t got = rix_select(ix, odd_only, NULL, &c, 64, page, &more);
        for (size_t k = 0; k < got; k++) {
            const rix_task *t = rix_at(ix, page[k]);
            CHECK(t->dispatched_at <= last);
            last = t->dispatched_at;
        }
        seen += got;
        if (got)
            rix_cursor_of(ix, rix_at(ix, page[got - 1]), false, &c);
    }
    CHECK(seen == N / 2);
    /* a page is exactly the newest n that pass (ties on the time ordered by id): compared
     * with a sort of every task, from the top and from a cursor among equal times */
    for (int from_mid = 0; from_mid < 2; from_mid++) {
        rix_cursor at = { 0 };
        if (from_mid) {
            const rix_task *t = rix_get(ix, "t2001", 5);
            CHECK(t != NULL);
            rix_cursor_of(ix, t, false, &at);
        }
        size_t got = rix_select(ix, odd_only, NULL, &at, 64, page, &more);
        CHECK(got == 64 && more);
        /* brute force: the odd ids are t1, t3, ...; the time is 1000 + i/2, so newest first
         * is descending i (among equal times the higher id string first: "t2001" > "t2000") */
        int expect = from_mid ? 1999 : N - 1;
        for (size_t k = 0; k < got; k++, expect -= 2) {
            char want[16];
            snprintf(want, sizeof want, "t%d", expect);
            CHECK(strcmp(rix_id(ix, rix_at(ix, page[k]), &ib), want) == 0);
        }
    }
    {   /* ties: three tasks a second, newest second first and ascending ids within one,
         * so a page's boundary splits a tie whose later ids must still get in; a cursor
         * inside a tie */
        rix *tie = rix_new(300);
        for (int n = 0; n < 300; n++) {
            int i = 3 * (99 - n / 3) + n % 3;
            snprintf(id, sizeof id, "u%03d", i);
            rix_sum s = { .status = "failed", .attempt = 1, .nfields = 1, .dispatched_at = i / 3 };
            CHECK(rix_upsert(tie, id, strlen(id), &s));
        }
        uint32_t top[10];
        rix_cursor in = { 0 };
        for (int from = 0; from < 2; from++) {
            if (from)
                rix_cursor_of(tie, rix_get(tie, "u298", 4), false, &in);
            size_t got = rix_select(tie, NULL, NULL, &in, 10, top, &more);
            CHECK(got == 10 && more);
            for (size_t k = 0; k < got; k++) {
                char want[16];
                snprintf(want, sizeof want, "u%03d", (from ? 297 : 299) - (int)k);
                CHECK(strcmp(rix_id(tie, rix_at(tie, top[k]), &ib), want) == 0);
            }
        }
        rix_free(tie);
    }
    /* previous page: the 64 just newer than a cursor */
    rix_cursor mid = { 0 };
    size_t got = rix_select(ix, NULL, NULL, NULL, 64, page, &more);
    CHECK(got == 64);
    rix_cursor_of(ix, rix_at(ix, page[63]), false, &mid);
    size_t back = rix_select_before(ix, NULL, NULL, &mid, 64, page);
    CHECK(back == 63);
    /* sweep: tasks not seen are dropped */
    rix_sweep_begin(ix);
    rix_touch(ix, "t1", 2);
    rix_upsert(ix, "t3", 2, &same);
    CHECK(rix_sweep_end(ix) == N / 2 - 2);
    CHECK(rix_size(ix) == 2 && rix_get(ix, "t1", 2) && rix_get(ix, "t3", 2));
    /* the arena compacts under churn */
    for (int r = 0; r < 200; r++) {
        char err[40];
        snprintf(err, sizeof err, "error variant %d", r);
        rix_sum s = same;
        s.error = err;
        rix_upsert(ix, "t1", 2, &s);
    }
    CHECK(rix_memory(ix) < (1u << 20));
    CHECK(strcmp(rix_error(ix, rix_get(ix, "t1", 2)), "error variant 199") == 0);
    rix_free(ix);
    /* reserved once: the table does not grow while it fills, and every id is found */
    rix *big = rix_new(N);
    rix_reserve(big, 10 * N);                           /* capped at the maximum */
    size_t mem = rix_memory(big);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "r%d", i);
        rix_sum s = { .status = "running", .attempt = 1, .nfields = 1, .dispatched_at = i };
        CHECK(rix_upsert(big, id, strlen(id), &s));
    }
    size_t grown = rix_memory(big) - mem;               /* the arena and tasks only */
    rix *plain = rix_new(N);
    size_t mem0 = rix_memory(plain);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "r%d", i);
        rix_sum s = { .status = "running", .attempt = 1, .nfields = 1, .dispatched_at = i };
        rix_upsert(plain, id, strlen(id), &s);
    }
    CHECK(rix_memory(plain) - mem0 > grown);            /* plain grew its slots as well */
    CHECK(rix_memory(plain) >= rix_memory(big));        /* grown by steps: not smaller */
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "r%d", i);
        CHECK(rix_get(big, id, strlen(id)) != NULL);
    }
    rix_free(plain);
    rix_free(big);
    rix *small = rix_new(2);                            /* the cap marks overflow */
    rix_upsert(small, "a", 1, &same);
    rix_upsert(small, "b", 1, &same);
    CHECK(!rix_upsert(small, "c", 1, &same) && rix_overflow(small));
    rix_free(small);
}

/* One sweep over the tasks [lo, hi): every task upserted; changed tasks get another
 * error text and status. */
static void sweep_range(rix *ix, int lo, int hi, int changed_from, int changed_to)
{
    static const char *const errs[] = { "Upstream returned 503 (transient)",
                                        "connection reset by peer", "timeout after 30 s" };
    char id[32];
    rix_sweep_begin(ix);
    for (int i = lo; i < hi; i++) {
        snprintf(id, sizeof id, "task-%07d", 100000 + i);   /* numbers of one size */
        bool changed = i >= changed_from && i < changed_to, failed = (i * 7919) % 100 >= 80;
        rix_sum s = { .status = changed ? "succeeded" : failed ? "failed" : "succeeded",
                      .attempt = 1 + i % 3, .nfields = 1 + i % 3, .name = "bench.job",
                      .code = failed && !changed ? "E_TRANSIENT" : NULL,
                      .error = failed && !changed ? errs[i % 3] : NULL,
                      .dispatched_at = 1.7e9 + i };
        rix_upsert(ix, id, strlen(id), &s);
    }
    rix_sweep_end(ix);
}

/* Issue 27: the index's bytes per task at a fixed size (a machine-independent figure: sizes,
 * not malloc), and no growth over 10 sweeps with 10 % churn (tasks gone, new, changed). */
static void test_index_memory(void)
{
    enum { N = 20000, CHURN = N / 10 };
    rix *ix = rix_new(4 * N);
    rix_reserve(ix, N);                                 /* as the first sweep does (DBSIZE) */
    sweep_range(ix, 0, N, 0, 0);
    size_t first = rix_memory(ix);
    char msg[120];
    snprintf(msg, sizeof msg, "%zu bytes for %d tasks: %.1f B a task", first, N,
             (double)first / N);
    CHECK_MSG(first <= (size_t)N * 36, msg);            /* 87 before issue 27 */
    fprintf(stderr, "index memory: %s\n", msg);
    int lo = 0;
    for (int sweep = 2; sweep <= 10; sweep++) {
        lo += CHURN;                                    /* the oldest 10 % gone, 10 % new */
        sweep_range(ix, lo, lo + N, lo + CHURN, lo + 2 * CHURN);
    }
    CHECK(rix_size(ix) == N);
    snprintf(msg, sizeof msg, "after sweep 10: %zu bytes, after sweep 1: %zu", rix_memory(ix),
             first);
    CHECK_MSG(rix_memory(ix) * 100 <= first * 105, msg);
    fprintf(stderr, "index memory: %s\n", msg);
    rix_idbuf ib;
    const rix_task *t = rix_get(ix, "task-0119000", 12);
    CHECK(t && strcmp(rix_id(ix, t, &ib), "task-0119000") == 0);
    CHECK(rix_get(ix, "task-0100001", 12) == NULL);     /* swept away */
    rix_free(ix);
}

/* The worst case of the interned errors: every task failed with a text of its own (38
 * characters). Each text is held once, in the texts' arena: 138 bytes a task when each
 * text was a block of its own. */
static void test_index_memory_distinct(void)
{
    enum { N = 20000 };
    rix *ix = rix_new(4 * N);
    rix_reserve(ix, N);
    char id[32], err[64];
    rix_sweep_begin(ix);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "task-%07d", 100000 + i);
        snprintf(err, sizeof err, "connect to 10.0.%d.%d:5432 refused", i / 250, i % 250);
        rix_sum s = { .status = "failed", .attempt = 1, .nfields = 1, .name = "bench.job",
                      .code = "E_CONN", .error = err, .dispatched_at = 1.7e9 + i };
        rix_upsert(ix, id, strlen(id), &s);
    }
    rix_sweep_end(ix);
    char msg[120];
    snprintf(msg, sizeof msg, "%zu bytes for %d tasks with distinct errors: %.1f B a task",
             rix_memory(ix), N, (double)rix_memory(ix) / N);
    fprintf(stderr, "index memory: %s\n", msg);
    CHECK_MSG(rix_memory(ix) <= (size_t)N * 120, msg);
    rix_free(ix);
}

/* A sweep begun over every `step`th task of [0, n), its end left to the caller. */
static rix *index_swept(int n, int step)
{
    rix *ix = rix_new(4 * (size_t)n);
    rix_reserve(ix, 3 * (size_t)n);         /* DBSIZE far above the tasks: the slots shrink */
    char id[32];
    for (int pass = 0; pass < 2; pass++) {
        rix_sweep_begin(ix);
        for (int i = 0; i < n; i += pass ? step : 1) {
            snprintf(id, sizeof id, "task-%07d", 100000 + i);
            rix_sum s = { .status = i % 5 ? "succeeded" : "failed", .attempt = 1,
                          .error = i % 5 ? NULL : "boom", .dispatched_at = 1.7e9 + i };
            rix_upsert(ix, id, strlen(id), &s);
        }
        if (pass == 0)
            rix_sweep_end(ix);
    }
    return ix;
}

/* Every task found again by its id. */
static bool index_whole(const rix *ix)
{
    rix_idbuf ib;
    for (size_t k = 0; k < rix_size(ix); k++) {
        const char *id = rix_id(ix, rix_at(ix, k), &ib);
        if (rix_get(ix, id, strlen(id)) != rix_at(ix, k))
            return false;
    }
    return true;
}

static bool index_same(const rix *a, const rix *b)
{
    rix_idbuf ia, ib;
    if (rix_size(a) != rix_size(b) || rix_memory(a) != rix_memory(b))
        return false;
    for (size_t k = 0; k < rix_size(a); k++) {
        const char *id = rix_id(b, rix_at(b, k), &ib);
        if (strcmp(rix_id(a, rix_at(a, k), &ia), id) != 0 ||
            rix_get(b, id, strlen(id)) != rix_at(b, k))
            return false;
    }
    return true;
}

/* Issue 27: the end of a sweep (the walk, the arena's compaction, the slots' rehash) runs in
 * slices of at most a budget of tasks, the loop free between them; queries work between
 * slices, and the index ends exactly as with one rix_sweep_end. */
static void test_index_end_slices(void)
{
    enum { N = 30000, BUDGET = 1000 };
    rix *whole = index_swept(N, 3), *sliced = index_swept(N, 3);
    size_t removed = rix_sweep_end(whole), got = 0, steps = 1, worst = 0;
    for (; !rix_sweep_end_step(sliced, BUDGET, &got); steps++) {
        worst = rix_sweep_end_work(sliced) > worst ? rix_sweep_end_work(sliced) : worst;
        CHECK(rix_sweep_ending(sliced) && index_whole(sliced));
    }
    char msg[120];
    snprintf(msg, sizeof msg, "%zu slices, the costliest %zu tasks, %zu removed of %zu",
             steps, worst, got, removed);
    fprintf(stderr, "index end: %s\n", msg);
    CHECK_MSG(worst <= BUDGET && steps >= (N + 2 * (N / 3)) / BUDGET, msg); /* walk, arena, slots */
    CHECK_MSG(got == removed && removed == N - N / 3 && !rix_sweep_ending(sliced), msg);
    CHECK(index_same(whole, sliced));
    rix_free(sliced);
    sliced = index_swept(N, 3);                 /* a new task mid-end finishes it first */
    rix_sweep_end_step(sliced, BUDGET, NULL);
    rix_sum s = { .status = "failed", .dispatched_at = 1.8e9 };
    rix_upsert(sliced, "task-9999999", 12, &s);
    CHECK(!rix_sweep_ending(sliced) && rix_size(sliced) == rix_size(whole) + 1);
    rix_remove(sliced, "task-9999999", 12);
    CHECK(index_same(whole, sliced));
    rix_free(sliced);
    rix_free(whole);
    /* the partial publishes of the first sweep: once a second up to 100,000 tasks, then
     * rarer (each walks the whole index) */
    CHECK(rs_partial_every(0) == 1.0 && rs_partial_every(100000) == 1.0);
    CHECK(rs_partial_every(300000) == 3.0 && rs_partial_every(1000000) == 10.0);
}

/* Issue 27: an insert does no O(index) work once the first sweep's DBSIZE reserve covers the
 * tasks: no task, hash slot or id copied into a grown array, with ids of several forms and
 * sizes (the ids' arena grows a chunk at a time). Without a reserve, growth copies. */
static void test_index_no_growth(void)
{
    enum { N = 60000 };
    rix *ix = rix_new(4 * N), *plain = rix_new(4 * N);
    rix_reserve(ix, N);
    char id[64];
    rix_sum s = { .status = "failed", .attempt = 1, .nfields = 1, .code = "E_TRANSIENT",
                  .error = "Upstream returned 503 (transient)", .dispatched_at = 1.7e9 };
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0)
            snprintf(id, sizeof id, "task-%07d", i);
        else if (i % 3 == 1)
            snprintf(id, sizeof id, "%08x-e29b-41d4-a716-%012d", i, i);
        else
            snprintf(id, sizeof id, "job.%d.with-a-longer-name-%d", i % 97, i);
        CHECK(rix_upsert(ix, id, strlen(id), &s) && rix_upsert(plain, id, strlen(id), &s));
    }
    char msg[120];
    snprintf(msg, sizeof msg, "reserved: %zu bytes copied by growth; unreserved: %zu",
             rix_moved(ix), rix_moved(plain));
    fprintf(stderr, "index growth: %s\n", msg);
    CHECK_MSG(rix_size(ix) == N && rix_moved(ix) == 0, msg);
    CHECK_MSG(rix_moved(plain) >= (size_t)N * sizeof(rix_task), msg);   /* the counter counts */
    CHECK(index_whole(ix) && index_whole(plain));
    rix_free(plain);
    rix_free(ix);
}

/* Ids of every form come back exactly, errors are held once however many tasks share them. */
static void test_index_forms(void)
{
    static const char *const ids[] = { "task-0000042", "42", "550e8400-e29b-41d4-a716-446655440000",
                                       "550E8400-E29B-41D4-A716-446655440000", "job-2026-11-27",
                                       "task-42", "task-", "x" };
    enum { K = sizeof ids / sizeof *ids };
    rix *ix = rix_new(100000);
    rix_sum s = { .status = "failed", .attempt = 2, .nfields = 2, .code = "E1", .name = "n",
                  .error = "db timeout after 3000 ms", .dispatched_at = 5 };
    for (size_t i = 0; i < K; i++)
        CHECK(rix_upsert(ix, ids[i], strlen(ids[i]), &s));
    rix_idbuf ib;
    for (size_t i = 0; i < K; i++) {
        const rix_task *t = rix_get(ix, ids[i], strlen(ids[i]));
        CHECK_MSG(t && strcmp(rix_id(ix, t, &ib), ids[i]) == 0, ids[i]);
        CHECK(t && strcmp(rix_error(ix, t), "db timeout after 3000 ms") == 0);
        CHECK(t && strcmp(rix_code_name(ix, t), "E1") == 0 && strcmp(rix_task_name(ix, t), "n") == 0);
    }
    CHECK(rix_get(ix, "task-0042", 9) == NULL && rix_get(ix, "nope-1", 6) == NULL);
    /* the same error on 50,000 more tasks costs no text per task */
    size_t before = rix_memory(ix);
    char id[32];
    for (int i = 0; i < 50000; i++) {
        snprintf(id, sizeof id, "task-%d", 1000 + i);
        rix_upsert(ix, id, strlen(id), &s);
    }
    size_t per = (rix_memory(ix) - before) / 50000;
    char msg[64];
    snprintf(msg, sizeof msg, "%zu B a task", per);
    CHECK_MSG(per <= 40, msg);
    CHECK(rix_fp(ix, rix_get(ix, "task-1000", 9)) == rix_fp(ix, rix_get(ix, "x", 1)));
    CHECK(rix_fp(ix, rix_get(ix, "x", 1)) != 0);
    rix_free(ix);
}

static void test_rabbit(void)
{
    rb_globs show, dlq;
    rb_globs_parse(&show, " worker.*.executions , orders ");
    rb_globs_parse(&dlq, "attune.dlx.queue");
    CHECK(show.n == 2 && rb_globs_match(&show, "worker.12.executions"));
    CHECK(rb_is_dlq(&dlq, "attune.dlx.queue") && rb_is_dlq(&dlq, "orders_dlq"));
    CHECK(rb_is_dlq(&dlq, "x.dlq") && rb_is_dlq(&dlq, "y.dlx.queue") && !rb_is_dlq(&dlq, "orders"));
    const char *page = "{\"page_count\":2,\"items\":["
        "{\"name\":\"worker.1.executions\",\"messages\":3,\"messages_ready\":2,"
        "\"messages_unacknowledged\":1,\"consumers\":0,\"arguments\":{\"x-message-ttl\":500,"
        "\"x-dead-letter-exchange\":\"attune.dlx\"},\"message_stats\":{\"publish_details\":"
        "{\"rate\":1.5}}},{\"name\":\"hidden\"},{\"name\":\"attune.dlx.queue\",\"messages\":5},"
        "{\"name\":7},{\"name\":\"orders\",\"messages\":\"x\"}]}";
    rb_queue_page p = { 0 };
    char why[200];
    CHECK(rb_decode_queues(page, strlen(page), &show, &dlq, &p, why, sizeof why));
    CHECK(p.n == 3 && p.page_count == 2);
    CHECK(p.items[0].depth == 3 && p.items[0].unacked == 1 && p.items[0].ttl_ms == 500);
    CHECK(strcmp(p.items[0].dead_letter_exchange, "attune.dlx") == 0);
    CHECK(p.items[0].publish_rate == 1.5 && p.items[0].deliver_rate == -1);
    CHECK(p.items[1].is_dlq && !p.items[0].is_dlq && p.items[2].depth == -1);
    rb_queue_page_free(&p);
    CHECK(!rb_decode_queues("[]", 2, &show, &dlq, &p, why, sizeof why));
    const char *msgs = "[{\"payload\":\"{\\\"payload\\\":{\\\"execution_id\\\":21}}\","
        "\"payload_encoding\":\"string\",\"redelivered\":true,\"properties\":{\"message_id\":"
        "\"m1\",\"headers\":{\"x-death\":[{\"reason\":\"expired\",\"count\":2,\"queue\":"
        "\"worker.5.executions\",\"time\":1700000100},{\"reason\":\"rejected\",\"count\":1,"
        "\"queue\":\"q0\",\"time\":\"2023-11-14T22:13:20Z\"}]}}},"
        "{\"payload\":\"eyJ0YXNrX3V1aWQiOiJhYmMifQ==\",\"payload_encoding\":\"base64\"},"
        "{\"payload\":\"not json\",\"properties\":{\"headers\":{\"x-first-death-reason\":"
        "\"maxlen\"}}}]";
    rd_dlq_entry *items = NULL;
    size_t n = 0;
    CHECK(rb_decode_messages(msgs, strlen(msgs), "attune.dlx.queue", &items, &n, why,
                             sizeof why));
    CHECK(n == 3);
    CHECK(strcmp(items[0].id, "m1") == 0 && strcmp(items[0].execution_id, "21") == 0);
    CHECK(strcmp(items[0].reason, "expired") == 0 && items[0].count == 2);
    CHECK(strcmp(items[0].origin_queue, "worker.5.executions") == 0 && items[0].redelivered);
    CHECK(items[0].first_death_at == 1700000000 && items[0].last_death_at == 1700000100);
    CHECK(strcmp(items[1].execution_id, "abc") == 0 && strstr(items[1].payload, "task_uuid"));
    CHECK(strcmp(items[2].reason, "maxlen") == 0 && !items[2].execution_id);
    CHECK(strcmp(items[2].id, "attune.dlx.queue#3") == 0);
    for (size_t i = 0; i < n; i++)
        dlq_entry_clear(&items[i]);
    free(items);
    rb_globs_free(&show);
    rb_globs_free(&dlq);
}

/* A queue's limits (the DLQ horizon's inputs): the lower of argument and policy, the
 * policy named when it set the TTL, overflow, and every way of not knowing them stated. */
static void test_rabbit_limits(void)
{
    static const struct {
        const char *item;            /* the queue object, less its name */
        long ttl, max_length, expires;
        bool rejects;
        const char *ttl_from, *note;
    } cases[] = {
        {"\"arguments\":{\"x-message-ttl\":3600000},\"policy\":null,\"effective_policy_definition\":{}",
         3600000, -1, -1, false, NULL, NULL},
        {"\"arguments\":{},\"policy\":\"p1\",\"effective_policy_definition\":{\"message-ttl\":600000,"
         "\"max-length\":50,\"overflow\":\"drop-head\",\"expires\":7200000}",
         600000, 50, 7200000, false, "policy p1", NULL},
        /* both: the lower applies (the argument here, the policy's max-length there) */
        {"\"arguments\":{\"x-message-ttl\":1000,\"x-max-length\":90},\"policy\":\"p2\","
         "\"effective_policy_definition\":{\"message-ttl\":5000,\"max-length\":80}",
         1000, 80, -1, false, NULL, NULL},
        {"\"arguments\":{\"x-max-length\":10,\"x-overflow\":\"reject-publish-dlx\"},\"policy\":null,"
         "\"effective_policy_definition\":{\"overflow\":\"drop-head\"}", -1, 10, -1, true, NULL, NULL},
        {"\"arguments\":{\"x-message-ttl\":\"1h\"},\"policy\":null,\"effective_policy_definition\":{}",
         -1, -1, -1, false, NULL, "x-message-ttl \"1h\" is not a whole number of 0 or more"},
        {"\"arguments\":{},\"policy\":\"p3\",\"effective_policy_definition\":{\"message-ttl\":-5}",
         -1, -1, -1, false, NULL, "policy message-ttl -5 is not a whole number of 0 or more"},
        {"\"arguments\":{\"x-expires\":1.5},\"policy\":null,\"effective_policy_definition\":{}",
         -1, -1, -1, false, NULL, "x-expires 1.5 is not a whole number of 0 or more"},
        {"\"arguments\":{\"x-overflow\":\"drop-tail\"},\"policy\":null,\"effective_policy_definition\":{}",
         -1, -1, -1, false, NULL, "x-overflow \"drop-tail\" is not drop-head, reject-publish or reject-publish-dlx"},
        /* hidden: no arguments, a policy without its definition, no policy fields at all */
        {"\"policy\":null,\"effective_policy_definition\":{}", -1, -1, -1, false, NULL,
         "the broker does not show the queue's arguments"},
        {"\"arguments\":{},\"policy\":\"secret\"", -1, -1, -1, false, NULL,
         "policy secret: the broker does not show its definition"},
        {"\"arguments\":{\"x-message-ttl\":5}", 5, -1, -1, false, NULL,
         "the broker does not show the queue's policy"},
    };
    rb_globs show, dlq;
    rb_globs_parse(&show, NULL);
    rb_globs_parse(&dlq, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *page = xasprintf("{\"items\":[{\"name\":\"x.dlq\",\"messages\":1,%s}]}", cases[i].item);
        rb_queue_page p = { 0 };
        char why[200], msg[32];
        snprintf(msg, sizeof msg, "limits case %zu", i);
        CHECK_MSG(rb_decode_queues(page, strlen(page), &show, &dlq, &p, why, sizeof why) && p.n == 1, msg);
        if (p.n == 1) {
            const rd_queue *q = &p.items[0];
            CHECK_MSG(q->ttl_ms == cases[i].ttl && q->max_length == cases[i].max_length &&
                      q->expires_ms == cases[i].expires && q->overflow_rejects == cases[i].rejects, msg);
            CHECK_MSG((!q->ttl_from && !cases[i].ttl_from) ||
                      (q->ttl_from && cases[i].ttl_from && strcmp(q->ttl_from, cases[i].ttl_from) == 0), msg);
            CHECK_MSG((!q->limits_note && !cases[i].note) ||
                      (q->limits_note && cases[i].note && strcmp(q->limits_note, cases[i].note) == 0), msg);
            if (q->limits_note && cases[i].note && strcmp(q->limits_note, cases[i].note) != 0)
                fprintf(stderr, "%s: %s\n", msg, q->limits_note);
        }
        rb_queue_page_free(&p);
        free(page);
    }
    /* a message's own TTL (expiration) is kept as the broker shows it */
    const char *msgs = "[{\"payload\":\"x\",\"properties\":{\"expiration\":\"60000\"}},"
                       "{\"payload\":\"y\",\"properties\":{}}]";
    rd_dlq_entry *items = NULL;
    size_t n = 0;
    char why[200];
    CHECK(rb_decode_messages(msgs, strlen(msgs), "x.dlq", &items, &n, why, sizeof why) && n == 2);
    CHECK(n == 2 && items[0].expiration && strcmp(items[0].expiration, "60000") == 0 && !items[1].expiration);
    for (size_t i = 0; i < n; i++)
        dlq_entry_clear(&items[i]);
    free(items);
    rb_globs_free(&show);
    rb_globs_free(&dlq);
}

/* A store listing several URLs (reading from replicas): items, blanks, a comma inside a
 * password, the first bad item named. */
static void test_url_lists(void)
{
    static const struct { const char *list; bool secret; size_t n; const char *items[3];
                          bool ok; const char *why; } t[] = {
        { "redis://127.0.0.1:6380/0", false, 1, { "redis://127.0.0.1:6380/0" }, true, "" },
        { "redis://127.0.0.1:6380/0, redis://127.0.0.1:6379/0", false, 2,
          { "redis://127.0.0.1:6380/0", "redis://127.0.0.1:6379/0" }, true, "" },
        { "  redis://a:1 ,rediss://b:2/1,\tredis+unix:///run/r.sock  ", false, 3,
          { "redis://a:1", "rediss://b:2/1", "redis+unix:///run/r.sock" }, true, "" },
        { "redis://u:pa,redis@127.0.0.1/0,redis://:x,y@127.0.0.2/0", true, 2,
          { "redis://u:pa,redis@127.0.0.1/0", "redis://:x,y@127.0.0.2/0" }, true, "" },
        { "redis://127.0.0.1/0, redis://127.0.0.1:99999/0", false, 2,
          { "redis://127.0.0.1/0", "redis://127.0.0.1:99999/0" }, false, "URL 2 of 2: bad port" },
        { "redis://127.0.0.1/0,", false, 1, { "redis://127.0.0.1/0," }, false,
          "bad database number" },
        { "redis://127.0.0.1/0, http://x/", false, 2, { "redis://127.0.0.1/0", "http://x/" },
          false, "URL 2 of 2: " },               /* any scheme starts an item (textutil.h) */
        { ", redis://127.0.0.1/0", false, 2, { "", "redis://127.0.0.1/0" }, false,
          "URL 1 of 2: " },                      /* a stray comma is an empty item, refused */
        { "", false, 0, { NULL }, false, "not a Redis URL" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        const char *st[REDIS_URL_LIST_MAX];
        size_t ln[REDIS_URL_LIST_MAX];
        size_t n = redis_url_split(t[i].list, st, ln, REDIS_URL_LIST_MAX);
        CHECK(n == t[i].n);
        for (size_t k = 0; k < n && k < 3; k++)
            CHECK(ln[k] == strlen(t[i].items[k]) && memcmp(st[k], t[i].items[k], ln[k]) == 0);
        char err[300] = "";
        bool ok = redis_url_check_list(t[i].list, t[i].secret, err, sizeof err);
        CHECK(ok == t[i].ok);
        CHECK(ok || strstr(err, t[i].why) != NULL);
        CHECK(strstr(err, "pa,redis") == NULL && strstr(err, "x,y") == NULL);
        if (ok && n) {
            rd_redis_url u;
            CHECK(redis_url_parse_item(t[i].list, n - 1, t[i].secret, &u, err, sizeof err));
            redis_url_clear(&u);
        }
    }
    char many[400] = "";
    for (int i = 0; i < REDIS_URL_LIST_MAX + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sredis://127.0.0.%d/0",
                 i ? "," : "", i + 1);
    char err[200] = "";
    CHECK(!redis_url_check_list(many, false, err, sizeof err) && strstr(err, "more than 8"));
}

int main(void)
{
    test_urls();
    test_secret_urls();
    test_url_lists();
    test_records();
    test_index();
    test_index_memory();
    test_index_memory_distinct();
    test_index_end_slices();
    test_index_no_growth();
    test_index_forms();
    test_rabbit();
    test_rabbit_limits();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("broker units: ok\n");
    return failures ? 1 : 0;
}
