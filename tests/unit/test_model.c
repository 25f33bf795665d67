#include "model.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_json.h"
#include "xalloc.h"

#define NOW 1700000000.0

static void fill_execs(rd_model *m)
{
    rd_execution *ex = xcalloc(2, sizeof *ex);
    ex[0].id = xstrdup("101");
    ex[0].name = xstrdup("core.http");
    ex[0].status = xstrdup("failed");
    ex[0].attempt = 2;
    ex[0].max_attempts = 3;
    ex[0].elig = (rd_verdict){ RD_ELIG_YES, false, "retry 2 of 3 allowed" };
    ex[0].chain_root = xstrdup("100");
    ex[0].retry_of = xstrdup("100");
    ex[0].reason = xstrdup("transient_error");
    ex[0].error = xstrdup("boom \x1b[2J\xFF end");
    ex[0].fingerprint = xstrdup("boom end");
    ex[0].worker = xstrdup("w1");
    ex[0].created_at = NOW - 60;
    ex[0].next_retry_min = NOW + 10;
    ex[0].next_retry_max = NOW + 20;
    ex[0].flags = RD_EXEC_OVERLAP;
    ex[1].id = xstrdup("t-9");
    ex[1].parent_id = xstrdup("task-1");
    ex[1].status = xstrdup("running");
    ex[1].attempt = 1;
    ex[1].max_attempts = -1;
    ex[1].elig = (rd_verdict){ RD_ELIG_CONFIG_ERROR, true, "max_attempts = 0" };
    ex[1].flags = RD_EXEC_ORPHAN | RD_EXEC_MALFORMED;
    model_set_execs(m, ex, 2, true);

    rd_execution *ch = xcalloc(1, sizeof *ch);
    ch[0].id = xstrdup("100");
    ch[0].status = xstrdup("failed");
    ch[0].attempt = 1;
    ch[0].max_attempts = 3;
    model_set_chain(m, "101", ch, 1);
}

static void fill(rd_model *m)
{
    fill_execs(m);
    rd_worker *w = xcalloc(1, sizeof *w);
    w[0].id = xstrdup("7");
    w[0].name = xstrdup("worker-\xE2\x80\xAE" "7");
    w[0].status = xstrdup("active");
    w[0].reported_health = xstrdup("healthy");
    w[0].tags = xstrdup("python,shell");
    w[0].health = RD_HEALTH_UNHEALTHY;
    snprintf(w[0].health_reason, sizeof w[0].health_reason, "heartbeat 5m old");
    w[0].heartbeat_at = NOW - 300;
    w[0].queue_depth = 12;
    w[0].in_flight = 2;
    w[0].capacity = 4;
    w[0].failure_rate = 0.25;
    w[0].consecutive_failures = 1;
    w[0].has_metrics = true;
    model_set_workers(m, w, 1);

    rd_queue *q = xcalloc(2, sizeof *q);
    q[0] = (rd_queue){ xstrdup("worker.7.executions"), 5, 4, 1, 0, 1.5, -1, false,
                       xstrdup("attune.dlx"), 300000, 2, 5, 345600, true, NULL, 0, false, 0, NULL, NULL };
    q[1] = (rd_queue){ xstrdup("attune.dlx.queue"), 3, 3, 0, 1, -1, -1, true, NULL, -1, 0, 0, 0, false, NULL, 0, false, 0, NULL, NULL };
    model_set_queues(m, "rabbitmq", q, 2);

    rd_dlq_entry *d = xcalloc(1, sizeof *d);
    d[0] = (rd_dlq_entry){ xstrdup("m1"), xstrdup("attune.dlx.queue"), xstrdup("101"),
                           xstrdup("expired"), 2, xstrdup("worker.7.executions"), NOW - 100,
                           NOW - 50, xstrdup("{\"execution_id\":101}"), true, 2,
                           xstrdup("render"), NOW - 200, NULL, NULL, NULL };
    model_dlq_set(m, "rabbitmq", d, 1);
    model_dlq_total(m, "rabbitmq", 3);

    rd_count *c = xcalloc(2, sizeof *c);
    snprintf(c[0].status, sizeof c[0].status, "failed");
    c[0].count = 10000;
    c[0].capped = true;
    snprintf(c[1].status, sizeof c[1].status, "completed");
    c[1].count = 123456;
    c[1].estimated = true;
    model_set_counts(m, c, 2);

    model_source_ok(m, "postgresql", NOW - 2);
    static const char *const notes[] = { "queues: relation \"job_tags\" does not exist", "",
                                         "workers: permission denied for table workers" };
    model_source_notes(m, "postgresql", notes, 3);
    model_source_ok(m, "rabbitmq", NOW - 100);
    model_source_fail(m, "rabbitmq", "connection refused", NOW - 10);
    model_source_fail(m, "redis", "no route", NOW - 5);
    m->orphan_suspects = 1;
    m->failing_rate = 2.5;
}

static void test_basics(void)
{
    rd_model *m = model_new();
    CHECK(m->dlq_total == -1 && m->orphan_suspects == -1 && m->failing_rate == -1);
    uint64_t g = m->generation;
    fill(m);
    CHECK(m->generation > g);
    CHECK(m->execs.n == 2 && m->execs_more);
    CHECK_STR(m->chain_id, "101");
    CHECK(m->dlq_loaded && m->dlq_total == 3);
    rd_source_status *s = model_source(m, "rabbitmq");
    CHECK(s->state == RD_SRC_STALE);
    CHECK_STR(s->error, "connection refused");
    CHECK(s->last_ok == NOW - 100 && s->since == NOW - 10);
    CHECK(model_source(m, "redis")->state == RD_SRC_DOWN);
    CHECK(model_source(m, "postgresql")->state == RD_SRC_OK);
    CHECK(m->sources.n == 3);
    rd_source_status *pg = model_source(m, "postgresql");
    CHECK(pg->n_notes == 2);            /* the empty one is dropped */
    CHECK_STR(pg->notes[1], "workers: permission denied for table workers");
    g = m->generation;
    static const char *const same[] = { "queues: relation \"job_tags\" does not exist",
                                        "workers: permission denied for table workers" };
    model_source_notes(m, "postgresql", same, 2);
    CHECK(m->generation == g);          /* unchanged: no repaint */
    model_source_notes(m, "postgresql", same, 1);
    CHECK(m->generation > g && pg->n_notes == 1 && pg->notes[1][0] == '\0');
    model_source_notes(m, "postgresql", same, 2);
    model_source_ok(m, "redis", NOW);
    CHECK(model_source(m, "redis")->state == RD_SRC_OK);
    CHECK_STR(model_source(m, "redis")->error, "");
    CHECK(model_source(m, "new")->state == RD_SRC_CONNECTING);
    char longname[80];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    model_source_fail(m, longname, "x", NOW);   /* truncated, no overflow */
    CHECK(model_source(m, longname)->state == RD_SRC_DOWN);
    /* replacing a list frees the old one (ASan checks the leak) */
    model_set_execs(m, NULL, 0, false);
    CHECK(m->execs.n == 0);
    CHECK_STR(elig_name(RD_ELIG_CONFIG_ERROR), "config-error");
    CHECK_STR(src_state_name(RD_SRC_STALE), "stale");
    CHECK_STR(src_state_name(RD_SRC_CONNECTING), "connecting");
    rd_execution e = { .id = xstrdup("x"), .error = xstrdup("y") };
    execution_clear(&e);
    CHECK(e.id == NULL && e.error == NULL);
    model_free(m);
    model_free(NULL);
}

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void test_roundtrip(void)
{
    rd_model *m = model_new();
    fill(m);
    char *json = model_to_json_at(m, "all", NOW);
    rd_model *r = model_new();
    char err[128];
    CHECK(model_from_json(r, json, NOW, err, sizeof err));
    char *json2 = model_to_json_at(r, "all", NOW);
    CHECK_STR(json2, json);
    CHECK(r->execs.n == 2 && r->execs_more);
    if (r->execs.n == 2) {
        rd_execution *a = &r->execs.items[0], *b = &r->execs.items[1];
        CHECK_STR(a->id, "101");
        CHECK_STR(a->chain_root, "100");
        CHECK_STR(a->error, "boom \x1b[2J\xEF\xBF\xBD end");   /* raw, valid UTF-8 */
        CHECK(a->elig.verdict == RD_ELIG_YES && a->max_attempts == 3);
        CHECK(a->next_retry_min == NOW + 10 && a->next_retry_max == NOW + 20);
        CHECK(a->flags == RD_EXEC_OVERLAP);
        CHECK(b->max_attempts == -1 && b->elig.verdict == RD_ELIG_CONFIG_ERROR);
        CHECK(b->elig.flagged && b->flags == (RD_EXEC_ORPHAN | RD_EXEC_MALFORMED));
        CHECK(b->chain_root == NULL && str_eq(b->parent_id, "task-1"));
    }
    CHECK(r->workers.n == 1 && r->workers.items[0].health == RD_HEALTH_UNHEALTHY);
    CHECK(r->workers.n == 1 && r->workers.items[0].heartbeat_at == NOW - 300);
    CHECK(r->queues.n == 2 && r->queues.items[1].is_dlq && r->queues.items[1].ttl_ms == -1);
    CHECK(r->dlq.n == 1 && r->dlq_total == 3 && r->dlq.items[0].redelivered);
    CHECK(r->counts.n == 2 && r->counts.items[0].capped && r->counts.items[1].estimated);
    CHECK(r->sources.n == 3 && r->sources.items[1].state == RD_SRC_STALE);
    CHECK(r->sources.n == 3 && r->sources.items[0].n_notes == 2);
    if (r->sources.n == 3)
        CHECK_STR(r->sources.items[0].notes[0], "queues: relation \"job_tags\" does not exist");
    CHECK(r->orphan_suspects == 1 && r->failing_rate == 2.5);
    CHECK_STR(r->chain_id, "101");
    free(json2);
    free(json);
    model_free(r);
    model_free(m);
}

static void test_views(void)
{
    rd_model *m = model_new();
    fill(m);
    static const struct { const char *view; const char *has[6]; const char *not[4]; } v[] = {
        { NULL, { "sources", "counts", "executions", "workers", "queues", NULL },
          { "dlq", "chain", NULL } },
        { "overview", { "sources", "counts", "executions", "workers", "queues", NULL },
          { "dlq", "chain", NULL } },
        { "executions", { "sources", "executions", NULL }, { "workers", "dlq", NULL } },
        { "chain", { "chain", NULL }, { "executions", NULL } },
        { "workers", { "workers", NULL }, { "queues", NULL } },
        { "queues", { "queues", NULL }, { "workers", NULL } },
        { "dlq", { "dlq", "dlq_total", NULL }, { "executions", NULL } },
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char *j = model_to_json_at(m, v[i].view, NOW);
        cJSON *root = cJSON_Parse(j);
        CHECK(root != NULL);
        for (size_t k = 0; v[i].has[k]; k++)
            CHECK_MSG(cJSON_GetObjectItemCaseSensitive(root, v[i].has[k]) != NULL, v[i].has[k]);
        for (size_t k = 0; v[i].not[k]; k++)
            CHECK_MSG(cJSON_GetObjectItemCaseSensitive(root, v[i].not[k]) == NULL, v[i].not[k]);
        cJSON_Delete(root);
        free(j);
    }
    /* stable field names and nulls */
    char *j = model_to_json_at(m, "overview", NOW);
    cJSON *root = cJSON_Parse(j);
    const cJSON *e1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "executions"), 1);
    static const char *const ef[] = { "id", "status", "attempt", "max_attempts",
        "retry_eligible", "chain_root", "error", "worker", "next_retry_at", NULL };
    for (size_t k = 0; ef[k]; k++)
        CHECK_MSG(cJSON_GetObjectItemCaseSensitive(e1, ef[k]) != NULL, ef[k]);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(e1, "max_attempts")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(e1, "next_retry_at")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(e1, "retry_eligible")));
    CHECK_STR(cJSON_GetObjectItem(e1, "chain_root")->valuestring, "t-9");
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "workers"), 0);
    CHECK(cJSON_GetObjectItem(w, "heartbeat_age_s")->valuedouble == 300);
    CHECK_STR(cJSON_GetObjectItem(w, "health")->valuestring, "unhealthy");
    const cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "sources"), 1);
    CHECK(cJSON_GetObjectItem(s, "age_ms")->valuedouble == 100000);
    const cJSON *s2 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "sources"), 2);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(s2, "age_ms")));
    cJSON_Delete(root);
    free(j);
    /* answered 0.6 ms "after" now (rounded up to the ms): 0 old, never -1 */
    model_source_ok(m, "late", 1700000000.0006);
    j = model_to_json_at(m, "overview", 1700000000.0);
    CHECK(j && strstr(j, "\"age_ms\":\t0,") && !strstr(j, "\"age_ms\":\t-"));
    free(j);
    model_free(m);
}

static void test_from_json_tolerant(void)
{
    static const char *const bad[] = { "", "nope", "[1,2]", "{\"executions\":", "null" };
    char err[64];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rd_model *m = model_new();
        CHECK_MSG(!model_from_json(m, bad[i], NOW, err, sizeof err), bad[i]);
        CHECK(err[0] != '\0');
        model_free(m);
    }
    rd_model *m = model_new();
    CHECK(!model_from_json(m, NULL, NOW, err, sizeof err));
    const char *j = "{\"now\": 1000, \"executions\": [{}, 5, {\"id\": 7, \"attempt\": \"x\","
                    "\"max_attempts\": -3, \"retry_eligible\": true, \"created_at\": -1},"
                    "{\"attempt\": 1e300, \"error\": null}],"
                    "\"workers\": [{\"heartbeat_age_s\": 30, \"queue_depth\": 1e99,"
                    " \"health\": \"bogus\"}],"
                    "\"sources\": [{\"name\": \"pg\", \"state\": \"ok\", \"age_ms\": 500,"
                    " \"error\": \"a very long error\"}], \"queues\": {}}";
    CHECK(model_from_json(m, j, NOW, err, sizeof err));
    CHECK(m->execs.n == 3);
    if (m->execs.n == 3) {
        CHECK(m->execs.items[0].id == NULL && m->execs.items[0].max_attempts == -1);
        CHECK(m->execs.items[1].id == NULL);   /* number, not a string */
        CHECK(m->execs.items[1].elig.verdict == RD_ELIG_YES);
        CHECK(m->execs.items[1].created_at == 0 && m->execs.items[1].attempt == 0);
        CHECK(m->execs.items[2].attempt == 0 && m->execs.items[2].error == NULL);
    }
    CHECK(m->workers.n == 1 && m->workers.items[0].heartbeat_at == 970);
    CHECK(m->workers.n == 1 && m->workers.items[0].queue_depth == -1);
    CHECK(m->workers.n == 1 && m->workers.items[0].health == RD_HEALTH_UNKNOWN);
    CHECK(m->sources.n == 1 && m->sources.items[0].state == RD_SRC_OK);
    CHECK(m->sources.n == 1 && m->sources.items[0].last_ok == 999.5);
    CHECK(m->queues.n == 0);
    char *out = model_to_json_at(m, "all", 1000);   /* NULL ids print as null */
    CHECK(strstr(out, "\"id\":\tnull") != NULL);
    free(out);
    model_free(m);
    /* without a "now" in the JSON, ages count back from the caller's now (the core reads
     * no clock) */
    m = model_new();
    CHECK(model_from_json(m, "{\"workers\": [{\"heartbeat_age_s\": 30}], \"sources\": "
                          "[{\"name\": \"pg\", \"age_ms\": 500}]}", 2000, err, sizeof err));
    CHECK(m->workers.n == 1 && m->workers.items[0].heartbeat_at == 1970);
    CHECK(m->sources.n == 1 && m->sources.items[0].last_ok == 1999.5);
    model_free(m);
}

static void test_text(void)
{
    rd_model *m = model_new();
    fill(m);
    static const char *const views[] = { NULL, "executions", "chain", "workers", "queues",
                                         "dlq", "bogus" };
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        char *t = model_to_text(m, views[i], NOW);
        CHECK(t != NULL && t[0]);
        for (const unsigned char *p = (const unsigned char *)t; p && *p; p++)
            CHECK_MSG(*p >= 0x20 || *p == '\n', views[i] ? views[i] : "overview");
        CHECK(strstr(t, "\xE2\x80\xAE") == NULL);   /* no raw RLO */
        free(t);
    }
    char *t = model_to_text(m, "workers", NOW);
    CHECK(strstr(t, "worker-<U+202E>7") != NULL);
    CHECK(strstr(t, "unhealthy (reported healthy)") != NULL);
    CHECK(strstr(t, "heartbeat 5m old") != NULL);
    free(t);
    t = model_to_text(m, NULL, NOW);
    CHECK(strstr(t, "\xE2\x90\x9B[2J") != NULL);       /* ESC shown as ␛ */
    CHECK(strstr(t, "10000+") != NULL);
    CHECK(strstr(t, "\xE2\x89\x88" "123456") != NULL);
    CHECK(strstr(t, "[overlapping]") != NULL);
    CHECK(strstr(t, "stale") != NULL);
    free(t);
    t = model_to_text(m, "executions", NOW);
    /* columns line up: the STATUS header and first value start at the same column */
    const char *hdr = strstr(t, "ID  ");
    const char *row = hdr ? strchr(hdr, '\n') + 1 : NULL;
    CHECK(hdr && row);
    if (hdr && row)
        CHECK(strstr(hdr, "STATUS") - hdr == strstr(row, "failed") - row);
    free(t);
    model_free(m);
}

/* snapshot --json: the whole output, with every kind of dangerous character in a
 * string: C0 (escaped by cJSON), DEL, C1, bidi controls, separators escaped;
 * their neighbours kept; invalid UTF-8 replaced. */
static void test_json_escapes(void)
{
    rd_model *m = model_new();
    rd_queue *q = xcalloc(1, sizeof *q);
    q->name = xstrdup("C0 \x1b\t DEL \x7f C1 \xC2\x80\xC2\x9F not \xC2\xA0 bidi "
                      "\xD8\x9C\xE2\x80\x8E\xE2\x80\x8F\xE2\x80\xAA\xE2\x80\xAE"
                      "\xE2\x81\xA6\xE2\x81\xA9 sep \xE2\x80\xA8\xE2\x80\xA9 not "
                      "\xE2\x80\x8D\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA\xF0\x9F\x98\x80 bad "
                      "\xFF\xC2 \xE2\x80 q \" b \\");
    q->depth = 3;
    q->ready = q->unacked = q->ttl_ms = -1;
    q->consumers = -1;
    q->publish_rate = q->deliver_rate = -1;
    q->dead_letter_exchange = xstrdup("dlx\xC2\x9B" "31m");
    model_set_queues(m, "rabbitmq", q, 1);
    static const char want[] =
        "{\n"
        "\t\"view\":\t\"queues\",\n"
        "\t\"sources\":\t[],\n"
        "\t\"queues\":\t[{\n"
        "\t\t\t\"name\":\t\"C0 \\u001b\\t DEL \\u007f C1 \\u0080\\u009f not \xC2\xA0 bidi "
        "\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069 sep \\u2028\\u2029 not "
        "\xE2\x80\x8D\xE2\x80\xAF\xE2\x81\xA5\xE2\x81\xAA\xF0\x9F\x98\x80 bad "
        "\xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD q \\\" b \\\\\",\n"
        "\t\t\t\"source\":\t\"rabbitmq\",\n"
        "\t\t\t\"depth\":\t3,\n"
        "\t\t\t\"consumers\":\tnull,\n"
        "\t\t\t\"is_dlq\":\tfalse,\n"
        "\t\t\t\"ready\":\tnull,\n"
        "\t\t\t\"unacked\":\tnull,\n"
        "\t\t\t\"publish_rate\":\tnull,\n"
        "\t\t\t\"deliver_rate\":\tnull,\n"
        "\t\t\t\"dead_letter_exchange\":\t\"dlx\\u009b31m\",\n"
        "\t\t\t\"ttl_ms\":\tnull\n"
        "\t\t}]\n"
        "}";
    char *j = model_to_json_at(m, "queues", NOW);
    CHECK_STR(j, want);
    /* the escapes read back as the same characters */
    rd_model *r = model_new();
    char err[128];
    CHECK(model_from_json(r, j, NOW, err, sizeof err));
    char *j2 = model_to_json_at(r, "queues", NOW);
    CHECK_STR(j2, want);
    free(j2);
    model_free(r);
    free(j);
    model_free(m);

    static const struct { const char *in, *out; } raw[] = {
        { "", "" },
        { "\"\xC2\x85\"", "\"\\u0085\"" },
        { "\xC2\x9F\xC2\xA0", "\\u009f\xC2\xA0" },
        { "\xE2\x80\xA7\xE2\x80\xA8\xE2\x80\xAE\xE2\x80\xAF",
          "\xE2\x80\xA7\\u2028\\u202e\xE2\x80\xAF" },
        { "\xE2\x81\xA5\xE2\x81\xA6\xE2\x81\xA9\xE2\x81\xAA",
          "\xE2\x81\xA5\\u2066\\u2069\xE2\x81\xAA" },
        { "\x80\xED\xA0\x80x", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDx" },
    };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
        char *o = json_text_safe(raw[i].in);
        CHECK_STR(o, raw[i].out);
        free(o);
    }
}

static rd_dlq_entry *dlq_entries(const char *queue, const char *const *ids, size_t n)
{
    rd_dlq_entry *d = xcalloc(n ? n : 1, sizeof *d);
    for (size_t i = 0; i < n; i++) {
        d[i].id = xstrdup(ids[i]);
        d[i].queue = xstrdup(queue);
        d[i].count = -1;
    }
    return d;
}

/* The merged DLQ after each step, as "total|id@source id@source ...". */
static void dlq_expect(const rd_model *m, const char *want)
{
    char got[256];
    size_t k = (size_t)snprintf(got, sizeof got, "%ld|", m->dlq_total);
    for (size_t i = 0; i < m->dlq.n && k < sizeof got; i++)
        k += (size_t)snprintf(got + k, sizeof got - k, "%s%s@%s", i ? " " : "",
                              m->dlq.items[i].id, m->dlq.items[i].source);
    CHECK_STR(got, want);
}

/* Several DLQ sources (Tasker: RabbitMQ queues and tasks_dlq): each owns its share, a
 * refresh of one never drops the other's entries, the total is the sum of known parts. */
static void test_dlq_owners(void)
{
    rd_model *m = model_new();
    static const char *const pg1[] = { "t1", "t2" }, *const pg2[] = { "t3" },
                             *const rb[] = { "m1", "m2", "m3" };
    dlq_expect(m, "-1|");
    CHECK(!m->dlq_loaded);
    model_dlq_total(m, "rabbitmq", 5);                       /* the poll: depth known first */
    dlq_expect(m, "5|");
    CHECK(!m->dlq_loaded);
    model_dlq_set(m, "postgresql", dlq_entries("tasks_dlq", pg1, 2), 2);
    model_dlq_total(m, "postgresql", 2);
    dlq_expect(m, "7|t1@postgresql t2@postgresql");
    CHECK(m->dlq_loaded);
    model_dlq_set(m, "rabbitmq", dlq_entries("q_dlq", rb, 3), 3);        /* the peek */
    dlq_expect(m, "7|t1@postgresql t2@postgresql m1@rabbitmq m2@rabbitmq m3@rabbitmq");
    for (int refresh = 0; refresh < 3; refresh++) {          /* PostgreSQL refreshes */
        model_dlq_set(m, "postgresql", dlq_entries("tasks_dlq", pg2, 1), 1);
        model_dlq_total(m, "postgresql", 1);
        model_dlq_total(m, "rabbitmq", 5);                   /* the broker polls */
        dlq_expect(m, "6|t3@postgresql m1@rabbitmq m2@rabbitmq m3@rabbitmq");
    }
    uint64_t g = m->generation;
    model_dlq_total(m, "rabbitmq", 5);                       /* unchanged: no repaint */
    CHECK(m->generation == g);
    model_dlq_total(m, "postgresql", -1);                    /* count query failed */
    dlq_expect(m, "5|t3@postgresql m1@rabbitmq m2@rabbitmq m3@rabbitmq");
    CHECK(m->generation > g);
    model_dlq_set(m, "rabbitmq", NULL, 0);                   /* peek found nothing */
    model_dlq_total(m, "rabbitmq", -7);                      /* any negative is unknown */
    dlq_expect(m, "-1|t3@postgresql");
    model_dlq_total(m, "redis", 0);                          /* a known zero counts */
    dlq_expect(m, "0|t3@postgresql");
    CHECK(m->dlq_parts.n == 3);
    if (m->dlq_parts.n == 3) {                               /* owner order, whatever came first */
        CHECK_STR(m->dlq_parts.items[0].owner, "postgresql");
        CHECK_STR(m->dlq_parts.items[1].owner, "rabbitmq");
        CHECK_STR(m->dlq_parts.items[2].owner, "redis");
    }

    /* a snapshot keeps the shares */
    model_dlq_set(m, "rabbitmq", dlq_entries("q_dlq", rb, 2), 2);
    model_dlq_total(m, "rabbitmq", 4);
    char *json = model_to_json_at(m, "dlq", NOW);
    rd_model *r = model_new();
    char err[128];
    CHECK(model_from_json(r, json, NOW, err, sizeof err));
    dlq_expect(r, "4|t3@postgresql m1@rabbitmq m2@rabbitmq");
    CHECK(r->dlq_parts.n == 3 && r->dlq_loaded);
    char *json2 = model_to_json_at(r, "dlq", NOW);
    CHECK_STR(json2, json);
    CHECK(strstr(json, "\"dlq_sources\"") != NULL);
    /* an older snapshot without sources: one share */
    CHECK(model_from_json(r, "{\"dlq\":[{\"id\":\"x\"}],\"dlq_total\":9}", NOW, err,
                          sizeof err));
    dlq_expect(r, "9|x@snapshot");
    free(json);
    free(json2);
    model_free(r);
    model_free(m);
}

/* The RabbitMQ age flicker (issue 11): the broker is polled every 5 s (its stats refresh
 * rate) while the system polls every 2 s; the answer lands a little after each tick, by a
 * latency that varies. Simulated clock, 10 ms steps over 5 minutes: a source answering on
 * its own cadence is always fresh, whatever the jitter; one that stops answering shows its
 * age from 2 × 5 + 1 s on. */
/* The last-known snapshot's DLQ totals (the "cache" view, read back as a restart does)
 * are replaced by each source's live total, never added to it, and marked until then. */
static void test_dlq_cached(void)
{
    rd_model *m = model_new();
    model_dlq_total(m, "postgresql", 3);
    model_dlq_total(m, "rabbitmq", 2);
    char *json = model_to_json_at(m, "cache", 1000);
    model_free(m);
    for (int round = 0; round < 2; round++) {   /* twice: the second start reads the first's save */
        m = model_new();
        char err[160];
        CHECK(model_from_json(m, json, NOW, err, sizeof err));
        model_dlq_mark_cached(m, 1000);
        CHECK(m->dlq_total == 5 && m->dlq_cached_at == 1000);
        model_dlq_total(m, "postgresql", 3);     /* live: replaces, never 3 + 3 */
        CHECK(m->dlq_total == 5 && m->dlq_cached_at == 1000);   /* rabbitmq still cached */
        model_dlq_total(m, "rabbitmq", 2);
        CHECK(m->dlq_total == 5 && m->dlq_cached_at == 0);
        free(json);
        json = model_to_json_at(m, "cache", 1000);
        model_free(m);
    }
    free(json);

    m = model_new();   /* an older cache file: one total of no source, dropped */
    char err[160];
    CHECK(model_from_json(m, "{\"dlq_total\": 7}", NOW, err, sizeof err));
    CHECK(m->dlq_total == 7);
    model_dlq_mark_cached(m, 1000);
    CHECK(m->dlq_total == -1 && m->dlq_cached_at == 0);
    model_free(m);

    m = model_new();   /* a cached share of a source this session lacks: dropped when live */
    model_dlq_total(m, "rabbitmq", 4);
    model_dlq_total(m, "postgresql", 1);
    model_dlq_mark_cached(m, 1000);
    model_dlq_total(m, "postgresql", 1);
    const char *live[] = { "postgresql" };
    model_dlq_drop_cached(m, live, 1);
    CHECK(m->dlq_total == 1 && m->dlq_cached_at == 0 && m->dlq_parts.n == 1);
    model_free(m);
}

static void test_source_freshness(void)
{
    static const struct { double every, poll, lat_min, lat_max, stop_at; } cases[] = {
        { 5, 2, 0.02, 0.40, 0 },      /* the broker: 5 s cadence, jittery latency */
        { 5, 2, 0.01, 3.00, 0 },      /* a slow broker: answers up to 3 s after the tick */
        { 0, 2, 0.01, 1.50, 0 },      /* PostgreSQL on the system's poll */
        { 5, 10, 0.01, 0.50, 0 },     /* poll longer than the broker's floor */
        { 5, 2, 0.02, 0.40, 120 },    /* stops answering at t = 120 s */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_model *m = model_new();
        model_source_every(m, "rabbitmq", cases[i].every);
        rd_source_status *s = model_source(m, "rabbitmq");
        double every = cases[i].every > cases[i].poll ? cases[i].every : cases[i].poll;
        double next_tick = 0, answer_at = -1, last_answer = 0;
        unsigned seed = 12345u + (unsigned)i;
        int stale_steps = 0, first_stale_ms = -1;
        for (int ms = 0; ms <= 300000; ms += 10) {
            double now = NOW + ms / 1000.0, t = ms / 1000.0;
            if (t >= next_tick && (cases[i].stop_at <= 0 || t < cases[i].stop_at)) {
                seed = seed * 1103515245u + 12345u;
                double f = (double)((seed >> 8) % 1000) / 999.0;
                answer_at = t + cases[i].lat_min + f * (cases[i].lat_max - cases[i].lat_min);
                next_tick += every;
            }
            if (answer_at >= 0 && t >= answer_at) {
                model_source_ok(m, "rabbitmq", now);
                last_answer = t;
                answer_at = -1;
            }
            if (s->last_ok > 0 && !source_is_fresh(s, cases[i].poll, now)) {
                stale_steps++;
                if (first_stale_ms < 0)
                    first_stale_ms = ms;
            }
        }
        if (cases[i].stop_at <= 0) {
            CHECK_MSG(stale_steps == 0, "a source answering on its cadence showed an age");
        } else {
            /* stale from 2 × every + 1 s after the last answer, to the 10 ms step */
            double want = last_answer + 2 * every + 1;
            CHECK(first_stale_ms >= 0 && first_stale_ms / 1000.0 >= want - 0.011 &&
                  first_stale_ms / 1000.0 <= want + 0.011);
        }
        model_free(m);
    }
    /* the old window (2 × the system's poll + 1 s) is what flickered: same traffic */
    rd_source_status s = {0};
    s.last_ok = NOW;
    CHECK(source_is_fresh(&s, 2, NOW + 4.99) && !source_is_fresh(&s, 2, NOW + 5.0));
    s.every_s = 5;
    CHECK(source_is_fresh(&s, 2, NOW + 5.3) && source_is_fresh(&s, 2, NOW + 10.99));
    CHECK(!source_is_fresh(&s, 2, NOW + 11.0));
    CHECK(!source_is_fresh(&s, 2, NOW - 6));          /* clock jumped back: show it */
    s.last_ok = 0;
    CHECK(!source_is_fresh(&s, 2, NOW));
    CHECK(source_fresh_s(&s, 10) == 21);
}

static rd_queue *queues_named(size_t n, const char *prefix)
{
    rd_queue *q = xcalloc(n, sizeof *q);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s.%zu", prefix, i);
        q[i].name = xstrdup(name);
        q[i].depth = (long)i;
        q[i].ready = q[i].unacked = q[i].ttl_ms = -1;
        q[i].consumers = -1;
        q[i].publish_rate = q[i].deliver_rate = -1;
    }
    return q;
}

/* Queues owned per source (issue 11: Tasker lists PGMQ queues from PostgreSQL and the
 * broker's from RabbitMQ; each refresh used to replace the other's). */
static void test_queue_owners(void)
{
    rd_model *m = model_new();
    model_set_queues(m, "rabbitmq", queues_named(3, "broker"), 3);
    model_set_queues(m, "postgresql", queues_named(2, "pgmq"), 2);
    CHECK(m->queues.n == 5);
    CHECK(str_eq(m->queues.items[0].name, "pgmq.0") && str_eq(m->queues.items[0].source, "postgresql"));
    CHECK(str_eq(m->queues.items[2].name, "broker.0") && str_eq(m->queues.items[4].source, "rabbitmq"));
    uint64_t g = m->generation;
    model_set_queues(m, "postgresql", queues_named(1, "pgmq"), 1);   /* a refresh of one */
    CHECK(m->generation > g && m->queues.n == 4);
    CHECK(str_eq(m->queues.items[3].name, "broker.2") && str_eq(m->queues.items[3].source, "rabbitmq"));
    model_set_queues(m, "rabbitmq", NULL, 0);                          /* the broker's gone */
    CHECK(m->queues.n == 1 && str_eq(m->queues.items[0].name, "pgmq.0"));
    model_set_queues(m, "rabbitmq", queues_named(2, "broker"), 2);

    /* a snapshot keeps the owners: read back, each source still replaces only its own */
    char *json = model_to_json_at(m, "queues", NOW), err[256];
    rd_model *r = model_new();
    model_set_queues(r, "sqs", queues_named(1, "old"), 1);            /* replaced by the snapshot */
    CHECK(model_from_json(r, json, NOW, err, sizeof err));
    CHECK(r->queues.n == 3);
    CHECK(str_eq(r->queues.items[0].source, "postgresql") && str_eq(r->queues.items[2].source, "rabbitmq"));
    model_set_queues(r, "rabbitmq", queues_named(1, "new"), 1);
    CHECK(r->queues.n == 2 && str_eq(r->queues.items[0].name, "pgmq.0") && str_eq(r->queues.items[1].name, "new.0"));
    free(json);
    model_free(r);
    model_free(m);
}

/* The "replica" object of source `name` in snapshot --json (NULL when absent); *doc to free. */
static const cJSON *json_replica(const rd_model *m, const char *name, cJSON **doc)
{
    char *j = model_to_json_at(m, "all", NOW);
    *doc = cJSON_Parse(j);
    free(j);
    const cJSON *src;
    cJSON_ArrayForEach(src, cJSON_GetObjectItem(*doc, "sources"))
        if (strcmp(cJSON_GetObjectItem(src, "name")->valuestring, name) == 0)
            return cJSON_GetObjectItem(src, "replica");
    return NULL;
}

/* Reading from replicas: the generation moves only when the shown text does (lag in whole
 * seconds); JSON and text say host, role, lag and the failover. */
static void test_replica(void)
{
    rd_model *m = model_new();
    model_source_ok(m, "postgresql", NOW);
    uint64_t g = m->generation;
    model_source_replica(m, "postgresql", "10.0.0.7:5432", "standby", 0.4);
    CHECK(m->generation > g);
    g = m->generation;
    model_source_replica(m, "postgresql", "10.0.0.7:5432", "standby", 0.9);   /* still 0 s */
    CHECK(m->generation == g);
    model_source_replica(m, "postgresql", "10.0.0.7:5432", "standby", 3.2);
    CHECK(m->generation > g);
    cJSON *doc;
    const cJSON *r = json_replica(m, "postgresql", &doc);
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(cJSON_GetObjectItem(r, "host")->valuestring, "10.0.0.7:5432");
        CHECK_STR(cJSON_GetObjectItem(r, "role")->valuestring, "standby");
        CHECK(cJSON_GetObjectItem(r, "lag_s")->valuedouble == 3);
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "failover")));
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "failover_at")));
    }
    cJSON_Delete(doc);
    model_source_failover(m, "postgresql", "from 10.0.0.7:5432 (gone) to 10.0.0.5:5432 primary",
                          NOW);
    model_source_replica(m, "postgresql", "10.0.0.5:5432", "primary", -1);
    char *t = model_to_text(m, NULL, NOW);
    CHECK(t && strstr(t, "via 10.0.0.5:5432 primary; failed over from 10.0.0.7:5432 (gone)"));
    free(t);
    r = json_replica(m, "postgresql", &doc);
    CHECK(r && cJSON_IsNull(cJSON_GetObjectItem(r, "lag_s")));
    CHECK(r && strstr(cJSON_GetObjectItem(r, "failover")->valuestring, "(gone) to 10.0.0.5"));
    CHECK(r && cJSON_GetObjectItem(r, "failover_at")->valuedouble > 0);
    cJSON_Delete(doc);
    model_source_ok(m, "redis", NOW);                 /* one host, primary: no replica part */
    CHECK(json_replica(m, "redis", &doc) == NULL);
    cJSON_Delete(doc);
    model_free(m);
}

/* A source's long first read: its text, the generation, the partial marks in JSON and text. */
static void test_progress(void)
{
    rd_model *m = model_new();
    rd_source_status *s = model_source(m, "redis");
    char t[200];
    source_progress_text(s, t, sizeof t);
    CHECK_STR(t, "");
    CHECK(!model_partial(m));
    rd_progress p = { .active = true, .done = 420000, .total = 1000000, .share = 0.25 };
    uint64_t g = m->generation;
    model_source_progress(m, "redis", &p);
    CHECK(m->generation != g);
    g = m->generation;
    model_source_progress(m, "redis", &p);           /* the same: nothing moves */
    CHECK(m->generation == g);
    source_progress_text(model_source(m, "redis"), t, sizeof t);
    CHECK_STR(t, "reading tasks: 420,000 of ~1,000,000 (42 %), 25 % of one Redis core");
    CHECK(model_partial(m));
    char *json = model_to_json_at(m, "overview", 1000);
    cJSON *doc = cJSON_Parse(json);
    const cJSON *src = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "sources"), 0);
    const cJSON *pj = cJSON_GetObjectItem(src, "progress");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "partial")));
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(pj, "done")), 420000);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(pj, "total")), 1000000);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(pj, "share")), 0.25);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(pj, "text")),
              "reading tasks: 420,000 of ~1,000,000 (42 %), 25 % of one Redis core");
    cJSON_Delete(doc);
    free(json);
    char *text = model_to_text(m, "overview", 1000);
    CHECK(strstr(text, "PARTIAL: reading tasks: 420,000 of ~1,000,000 (42 %), 25 % of one Redis "
                       "core (counts, DLQ and groups so far)") != NULL);
    free(text);
    /* unknown total and share; past the estimate it never says 100 % */
    p = (rd_progress){ .active = true, .done = 1234, .total = -1, .share = -1 };
    model_source_progress(m, "redis", &p);
    source_progress_text(model_source(m, "redis"), t, sizeof t);
    CHECK_STR(t, "reading tasks: 1,234");
    p = (rd_progress){ .active = true, .done = 1200, .total = 1000, .share = 0 };
    model_source_progress(m, "redis", &p);
    source_progress_text(model_source(m, "redis"), t, sizeof t);
    CHECK_STR(t, "reading tasks: 1,200 of ~1,000 (99 %), 0 % of one Redis core");
    model_source_progress(m, "redis", NULL);          /* done: whole again */
    CHECK(!model_partial(m));
    json = model_to_json_at(m, "overview", 1000);
    CHECK(strstr(json, "partial") == NULL && strstr(json, "progress") == NULL);
    free(json);
    model_free(m);
}

int main(void)
{
    test_progress();
    test_replica();
    test_basics();
    test_roundtrip();
    test_queue_owners();
    test_views();
    test_from_json_tolerant();
    test_text();
    test_json_escapes();
    test_dlq_owners();
    test_dlq_cached();
    test_source_freshness();
    return check_done("test_model");
}
