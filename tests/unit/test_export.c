#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "groupid.h"
#include "model.h"
#include "textutil.h"
#include "xalloc.h"

static char *S(const char *s)
{
    union { const char *c; char *m; } u = {s};
    return u.m;
}

static void test_csv_field(void)
{
    static const struct { const char *in; const char *want; } cases[] = {
        {NULL, ""},
        {"", ""},
        {"plain", "plain"},
        {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {" lead", "\" lead\""},
        {"trail ", "\"trail \""},
        {"in side", "in side"},
        {"esc\x1b[2J", "esc\xe2\x90\x9b[2J"},               /* control characters in visible form */
        {"cr\rhere", "cr\xe2\x90\x8dhere"},
        {"bidi\xe2\x80\xaex", "bidi<U+202E>x"},
        {"bad\xff", "bad\xef\xbf\xbd"},            /* invalid UTF-8 → U+FFFD */
        /* formula injection (OWASP): a leading quote keeps the cell text */
        {"=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""},
        {"=1+2", "'=1+2"},
        {"+1", "'+1"},
        {"-1", "'-1"},
        {"@SUM(A1)", "'@SUM(A1)"},
        {"\tcmd", "'\xe2\x90\x89" "cmd"},
        {"\rcmd", "'\xe2\x90\x8d" "cmd"},
        {"=a,b", "\"'=a,b\""},
        {"a=b", "a=b"},                           /* only the first character counts */
        {" =x", "\" =x\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *buf = xstrdup("");
        size_t len = 0, cap = 1;
        export_csv_field(&buf, &len, &cap, cases[i].in, false);
        CHECK_STR(buf, cases[i].want);
        CHECK(len == strlen(buf));
        free(buf);
    }
    char *buf = xstrdup("");
    size_t len = 0, cap = 1;
    export_csv_field(&buf, &len, &cap, "a", false);
    export_csv_field(&buf, &len, &cap, NULL, true);
    export_csv_field(&buf, &len, &cap, "c,d", true);
    CHECK_STR(buf, "a,,\"c,d\"");
    free(buf);
}

static void test_base64(void)
{
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t n = 0; n <= 6; n++) {   /* RFC 4648 §10 */
        char *b = text_base64("foobar", n);
        CHECK_STR(b, want[n]);
        free(b);
    }
    char *b = text_base64("\xff\xfe\x00", 3);
    CHECK_STR(b, "//4A");
    free(b);
}

static void test_render(void)
{
    rd_model *m = model_new();
    rd_worker *w = xcalloc(1, sizeof *w);
    w->id = xstrdup("7");
    w->name = xstrdup("worker, \"seven\"");
    w->status = xstrdup("draining");
    w->health = RD_HEALTH_HEALTHY;
    w->heartbeat_at = 1767225600;
    w->queue_depth = 12;
    w->in_flight = -1;
    w->capacity = 4;
    w->failure_rate = -1;
    w->consecutive_failures = 0;
    model_set_workers(m, w, 1);
    char err[200] = "";
    char *csv = export_render(m, "workers", EXPORT_CSV, 1767225600, err, sizeof err);
    CHECK_STR(csv, "id,name,status,health,health_reason,heartbeat_at,queue_depth,in_flight,capacity,"
                   "failure_rate,consecutive_failures,tags\r\n"
                   "7,\"worker, \"\"seven\"\"\",draining,healthy,,2026-01-01T00:00:00Z,12,,4,,0,\r\n");
    free(csv);
    char *json = export_render(m, "workers", EXPORT_JSON, 1767225600, err, sizeof err);
    const char *q = json ? strstr(json, "\"queue_depth\"") : NULL;
    q = q ? strchr(q, ':') : NULL;
    CHECK(q && strtol(q + 1, NULL, 10) == 12);
    free(json);
    CHECK(export_render(m, "journal", EXPORT_CSV, 0, err, sizeof err) == NULL);
    CHECK(strstr(err, "nothing to export in the journal view") != NULL);
    CHECK(export_render(m, NULL, EXPORT_JSON, 0, err, sizeof err) == NULL);
    CHECK(export_has_payloads("dlq"));
    CHECK(!export_has_payloads("workers") && !export_has_payloads(NULL));
    (void)S;
    model_free(m);
}

/* :export of the groups view: one line per group as the view counts them (here the loaded
 * executions': scope "loaded"), most members first, CSV-safe fingerprints. */
static void test_groups_csv(void)
{
    rd_model *m = model_new();
    rd_execution *e = xcalloc(3, sizeof *e);
    static const struct { const char *id, *fp, *err; double t; bool elig; } x[] = {
        {"11", "timeout after <n>s", "timeout after 30s", 1767225000, true},
        {"12", "timeout after <n>s", "timeout after 31s", 1767225500, false},
        {"13", "=cmd|refused", "=cmd|refused", 1767225100, true},
    };
    for (size_t i = 0; i < 3; i++) {
        e[i].id = xstrdup(x[i].id);
        e[i].name = xstrdup("core.http");
        e[i].status = xstrdup("failed");
        e[i].error = xstrdup(x[i].err);
        e[i].fingerprint = xstrdup(x[i].fp);
        e[i].attempt = 1;
        e[i].max_attempts = 3;
        e[i].created_at = e[i].updated_at = e[i].finished_at = x[i].t;
        e[i].elig.verdict = x[i].elig ? RD_ELIG_YES : RD_ELIG_NO;
    }
    model_set_execs(m, e, 3, false);
    char err[200] = "";
    char *csv = export_render(m, "groups", EXPORT_CSV, 1767225600, err, sizeof err);
    char ida[GROUPID_LEN + 1], idb[GROUPID_LEN + 1];
    groupid_make("timeout after <n>s", ida);
    groupid_make("=cmd|refused", idb);
    CHECK(strlen(ida) == GROUPID_LEN && strcmp(ida, idb) != 0);
    char *want = xasprintf("id,fingerprint,count,retry_eligible,recent,before,trend,first_seen,last_seen,"
                           "top_action,scope,sample_error\r\n"
                           "%s,timeout after <n>s,2,1,2,0,new,2025-12-31T23:50:00Z,2025-12-31T23:58:20Z,"
                           "core.http,loaded,timeout after 31s\r\n"
                           "%s,'=cmd|refused,1,1,1,0,new,2025-12-31T23:51:40Z,2025-12-31T23:51:40Z,"
                           "core.http,loaded,'=cmd|refused\r\n", ida, idb);
    CHECK_STR(csv, want);
    free(want);
    free(csv);
    model_free(m);
}

int main(void)
{
    test_csv_field();
    test_base64();
    test_render();
    test_groups_csv();
    return check_done("export");
}
