#include "groups.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_json.h"
#include "storegroups.h"
#include "xalloc.h"

/* the model holds char *: the cases are string literals it never writes */
#define W(s) ((char *)(uintptr_t)(s))

#define NOW 100000.0
#define HOUR 3600.0

static rd_execution ex(const char *id, const char *name, const char *status, const char *fp,
                       double finished, rd_elig elig)
{
    rd_execution e = {0};
    e.id = W(id);
    e.name = W(name);
    e.status = W(status);
    e.fingerprint = W(fp);
    e.error = W(fp);
    e.finished_at = finished;
    e.attempt = 1;
    e.elig.verdict = elig;
    return e;
}

static void test_failed(void)
{
    static const struct { const char *status; bool want; } cases[] = {
        {"failed", true}, {"FAILED", true}, {"error", true}, {"timeout", true},
        {"abandoned", true}, {"lost", true}, {"dead", true}, {"completed", false},
        {"running", false}, {"cancelled", false}, {"", false}, {NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_execution e = ex("1", "a", cases[i].status, "x", 1, RD_ELIG_YES);
        CHECK_MSG(exec_failed(&e) == cases[i].want, cases[i].status ? cases[i].status : "NULL");
    }
    rd_execution e = {0};
    e.created_at = 5;
    CHECK_NEAR(exec_failed_at(&e), 5);
    e.updated_at = 6;
    CHECK_NEAR(exec_failed_at(&e), 6);
    e.finished_at = 7;
    CHECK_NEAR(exec_failed_at(&e), 7);
}

static void test_trend(void)
{
    static const struct { size_t recent, before; rd_trend want; } cases[] = {
        {0, 0, TREND_QUIET}, {0, 5, TREND_QUIET}, {1, 0, TREND_NEW}, {3, 2, TREND_RISING},
        {2, 2, TREND_STEADY}, {2, 4, TREND_STEADY}, {2, 5, TREND_FALLING}, {1, 3, TREND_FALLING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "trend case %zu", i);
        CHECK_MSG(trend_of(cases[i].recent, cases[i].before) == cases[i].want, ctx);
    }
    CHECK_STR(trend_name(TREND_RISING), "rising");
    CHECK_STR(trend_name(TREND_QUIET), "quiet");
}

static void test_build(void)
{
    rd_execution e[] = {
        ex("1", "core.http", "failed", "timeout after <n>s", NOW - 60, RD_ELIG_YES),
        ex("2", "core.http", "completed", NULL, NOW - 50, RD_ELIG_NO),
        ex("3", "core.mail", "failed", "timeout after <n>s", NOW - 2 * HOUR, RD_ELIG_NO),
        ex("4", "core.http", "timeout", "timeout after <n>s", NOW - 30, RD_ELIG_YES),
        ex("5", "core.db", "failed", "deadlock detected", NOW - 10, RD_ELIG_YES),
        ex("6", "core.db", "failed", "deadlock detected", 0, RD_ELIG_UNKNOWN),
        ex("7", NULL, "failed", NULL, NOW - 5, RD_ELIG_YES),
        ex("8", "core.db", "running", "deadlock detected", NOW - 1, RD_ELIG_YES),
    };
    int loops[8] = {0, 0, 0, 2, 0, 0, 0, 1};
    rd_group *g = NULL;
    size_t n = groups_build(e, 8, loops, NOW, HOUR, &g);
    CHECK(n == 3);
    if (n != 3)
        return;
    /* biggest first */
    CHECK_STR(g[0].fp, "timeout after <n>s");
    CHECK(g[0].count == 3);
    CHECK(g[0].eligible == 2);
    CHECK(g[0].loops == 1);
    CHECK(g[0].recent == 2 && g[0].before == 1);
    CHECK(g[0].trend == TREND_RISING);
    CHECK_NEAR(g[0].first_seen, NOW - 2 * HOUR);
    CHECK_NEAR(g[0].last_seen, NOW - 30);
    CHECK(g[0].n_actions == 2);
    CHECK_STR(g[0].actions[0].name, "core.http");
    CHECK(g[0].actions[0].count == 2);
    CHECK_STR(g[0].actions[1].name, "core.mail");
    CHECK(g[0].n_members == 3);
    CHECK(g[0].members[0] == 3 && g[0].members[1] == 0 && g[0].members[2] == 2);   /* newest first */
    /* 2 members, one without a time: counted before the interval, first_seen from the other */
    CHECK_STR(g[1].fp, "deadlock detected");
    CHECK(g[1].count == 2 && g[1].eligible == 1 && g[1].loops == 0);
    CHECK(g[1].recent == 1 && g[1].before == 1);
    CHECK_NEAR(g[1].first_seen, NOW - 10);
    CHECK(g[1].n_members == 2 && g[1].members[0] == 4);
    /* no error text: its own group, action "-" */
    CHECK_STR(g[2].fp, "");
    CHECK(g[2].count == 1 && g[2].trend == TREND_NEW);
    CHECK_STR(g[2].actions[0].name, "-");
    groups_free(g, n);

    /* equal counts: the newest last failure first; no loops array */
    rd_execution f[] = {
        ex("a", "x", "failed", "A", NOW - 100, RD_ELIG_YES),
        ex("b", "x", "failed", "B", NOW - 10, RD_ELIG_YES),
    };
    n = groups_build(f, 2, NULL, NOW, HOUR, &g);
    CHECK(n == 2);
    if (n == 2) {
        CHECK_STR(g[0].fp, "B");
        CHECK_STR(g[1].fp, "A");
        CHECK(g[0].loops == 0);
    }
    groups_free(g, n);
    CHECK(groups_build(f, 0, NULL, NOW, HOUR, &g) == 0 && g == NULL);
}

typedef struct {
    const char *what, *id, *parent, *retry_of, *root, *status, *fp;
    int attempt, want;
} loop_case;

static void test_loops(void)
{
    /* the journal's accepted manual retries of this system */
    static const rd_retry_record recs[] = {
        {"41", "conn refused <ip>:<n>", 1},              /* attune: 41 retried, became 42 */
        {"42", "conn refused <ip>:<n>", 2},              /* 42 retried with override: 43 */
        {"task-1/step-1", "oom killed", 1},              /* tasker: same step id, parent/id */
        {"job-9", "quota exceeded", 2},                  /* same id, attempt 2 retried */
        {"job-10", NULL, 1},                             /* an old line without fp: unknown */
        {"job-11", "boom", 0},                           /* ... without attempt: unknown */
    };
    static const loop_case cases[] = {
        {"new execution of a retried one", "42", NULL, "41", "41", "failed", "conn refused <ip>:<n>", 2, 1},
        {"second manual retry failed too", "43", NULL, "42", "41", "failed", "conn refused <ip>:<n>", 3, 2},
        {"other error: no loop", "42", NULL, "41", "41", "failed", "division by zero", 2, 0},
        {"not failed: no loop", "42", NULL, "41", "41", "running", "conn refused <ip>:<n>", 2, 0},
        {"the retried attempt itself (not refreshed yet)", "41", NULL, NULL, NULL, "failed",
         "conn refused <ip>:<n>", 1, 0},
        {"unrelated execution", "77", NULL, NULL, NULL, "failed", "conn refused <ip>:<n>", 5, 0},
        {"tasker step, later attempt", "step-1", "task-1", NULL, NULL, "error", "oom killed", 2, 1},
        {"tasker step, same attempt", "step-1", "task-1", NULL, NULL, "error", "oom killed", 1, 0},
        {"tasker step of another task", "step-1", "task-2", NULL, NULL, "error", "oom killed", 2, 0},
        {"same id, later attempt", "job-9", NULL, NULL, NULL, "failed", "quota exceeded", 3, 1},
        {"same id, same attempt", "job-9", NULL, NULL, NULL, "failed", "quota exceeded", 2, 0},
        {"journal line without fp", "job-10", NULL, NULL, NULL, "failed", "x", 2, 0},
        {"journal line without attempt", "job-11", NULL, NULL, NULL, "failed", "boom", 2, 0},
        {"no fingerprint on the row", "42", NULL, "41", "41", "failed", NULL, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const loop_case *c = &cases[i];
        rd_execution e = {0};
        e.id = W(c->id);
        e.parent_id = W(c->parent);
        e.retry_of = W(c->retry_of);
        e.chain_root = W(c->root);
        e.status = W(c->status);
        e.fingerprint = W(c->fp);
        e.attempt = c->attempt;
        int got = loop_count(&e, recs, sizeof recs / sizeof *recs);
        char ctx[160];
        snprintf(ctx, sizeof ctx, "%s: got %d, want %d", c->what, got, c->want);
        CHECK_MSG(got == c->want, ctx);
    }
    rd_execution e = {0};
    CHECK(loop_count(&e, NULL, 0) == 0);
}

/* snapshot --json --view groups: the groups of the loaded executions; "all" has none. */
static void test_json(void)
{
    static const char fixture[] =
        "{\"executions\":["
        "{\"id\":\"a\",\"name\":\"x.run\",\"status\":\"failed\",\"attempt\":1,\"retry_eligible\":true,"
        "\"eligibility\":\"yes\",\"error\":\"timeout after 5s\",\"fingerprint\":\"timeout after <n>s\","
        "\"finished_at\":99940},"
        "{\"id\":\"b\",\"name\":\"y.run\",\"status\":\"failed\",\"attempt\":3,\"retry_eligible\":false,"
        "\"eligibility\":\"no\",\"error\":\"timeout after 9s\",\"fingerprint\":\"timeout after <n>s\","
        "\"finished_at\":90000},"
        "{\"id\":\"c\",\"name\":\"x.run\",\"status\":\"completed\",\"attempt\":1}]}";
    rd_model *m = model_new();
    char err[200] = "";
    CHECK_MSG(model_from_json(m, fixture, NOW, err, sizeof err), err);
    char *out = model_to_json_at(m, "groups", NOW);
    cJSON *o = cJSON_Parse(out);
    const cJSON *g = cJSON_GetObjectItem(o, "groups");
    CHECK(cJSON_GetArraySize(g) == 1);
    const cJSON *g0 = cJSON_GetArrayItem(g, 0);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "fingerprint")), "timeout after <n>s");
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "count")) == 2);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "retry_eligible")) == 1);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "recent")) == 1);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "before")) == 1);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "trend")), "steady");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(g0, "sample_error")), "timeout after 5s");
    const cJSON *mem = cJSON_GetObjectItem(g0, "members");
    CHECK(cJSON_GetArraySize(mem) == 2);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(mem, 0)), "a");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(mem, 1)), "b");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(g0, "actions")) == 2);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "trend_interval_s")) == 900);
    cJSON_Delete(o);
    free(out);
    out = model_to_json_at(m, "all", NOW);
    CHECK(strstr(out, "\"groups\"") == NULL);
    free(out);
    out = model_to_text(m, "groups", NOW);
    CHECK(strstr(out, "ERROR GROUPS") != NULL && strstr(out, "timeout after <n>s") != NULL);
    CHECK(strstr(out, "x.run(1) y.run(1)") != NULL);
    free(out);
    model_free(m);
}

/* The store's rows: distinct raw errors with one fingerprint merge; eligibility is each
 * prototype's verdict times its count; first/last seen and actions add up; the trend
 * compares rates over the window. */
static void test_store_groups(void)
{
    rd_sgroups *sg = sgroups_new(HOUR, 1000, NOW);
    struct { const char *fp, *name; rd_elig el; rd_group_tally t; } rows[] = {
        { "refused <ip>", "a", RD_ELIG_YES, { 6000, 1500, NOW - 3590, NOW - 10 } },
        { "refused <ip>", "b", RD_ELIG_NO, { 14000, 3500, NOW - 3500, NOW - 5 } },
        { "disk full", "c", RD_ELIG_NO, { 3, 3, NOW - 600, NOW - 60 } },
    };
    for (size_t i = 0; i < 3; i++) {
        rd_execution e = {0};
        e.id = xstrdup("1");
        e.name = xstrdup(rows[i].name);
        e.status = xstrdup("failed");
        e.fingerprint = xstrdup(rows[i].fp);
        e.error = xstrdup(rows[i].fp);
        e.elig.verdict = rows[i].el;
        sgroups_add(sg, &e, &rows[i].t);
    }
    sgroups_set_capped(sg, true);
    sgroups_finish(sg);
    CHECK(sgroups_n(sg) == 2 && sgroups_failures(sg) == 20003 && sgroups_capped(sg));
    const rd_group *g = sgroups_at(sg, 0);
    CHECK(strcmp(g->fp, "refused <ip>") == 0 && g->count == 20000 && g->eligible == 6000);
    CHECK(g->first_seen == NOW - 3590 && g->last_seen == NOW - 5);
    CHECK(g->recent == 5000 && g->before == 15000 && g->trend == TREND_STEADY);   /* a steady hour */
    CHECK(g->n_actions == 2 && strcmp(g->actions[0].name, "b") == 0 && g->actions[0].count == 14000);
    CHECK(sgroups_at(sg, 1)->trend == TREND_NEW);
    sgroups_free(sg);
    double w = 0;
    CHECK(sgroups_parse_window("6h", &w) && w == 6 * HOUR);
    CHECK(!sgroups_parse_window("30s", &w) && !sgroups_parse_window("31d", &w) && !sgroups_parse_window("6x", &w));
    char t[16];
    sgroups_window_text(6 * HOUR, t, sizeof t);
    CHECK(strcmp(t, "6h") == 0);
    sgroups_window_text(90 * 60, t, sizeof t);
    CHECK(strcmp(t, "90m") == 0);
}

int main(void)
{
    test_store_groups();
    test_failed();
    test_trend();
    test_build();
    test_loops();
    test_json();
    return check_done("test_groups");
}
