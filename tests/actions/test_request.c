/* Unit tests of the core-API request builder (src/actions/request.h): routes from a
 * profile or the default contract, path templates (URL-escaped), body templates
 * (JSON-escaped, the result must parse and give back the value), the Idempotency-Key and
 * the classification of responses. Behaviour only: no escaping routine is named here. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/actions/request.h"
#include "tests/unit/check.h"

static const char PROFILE[] =
    "[profile]\n"
    "name = t\n"
    "store = postgresql\n"
    "semantics = attune\n"
    "\n"
    "[action retry]\n"
    "method = PATCH\n"
    "path = /v1/tasks/{task}/steps/{id}\n"
    "body = {\"action\":\"reset\",\"reason\":\"{reason}\",\"by\":\"{operator}\"}\n"
    "\n"
    "[action undrain]\n"
    "method = POST\n"
    "path = /workers/{worker}/undrain\n";

static void test_routes(void)
{
    rd_profile p;
    rd_diags d = { 0 };
    memset(&p, 0, sizeof p);
    CHECK(profile_parse("t.profile", PROFILE, &p, &d));
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "%s\n", d.msgs[i]);
    rd_route r;
    CHECK(route_for(&p, RD_ACT_RETRY, &r));
    CHECK_STR(r.method, "PATCH");
    CHECK_STR(r.path, "/v1/tasks/{task}/steps/{id}");
    CHECK_STR(r.body, "{\"action\":\"reset\",\"reason\":\"{reason}\",\"by\":\"{operator}\"}");
    CHECK(route_for(&p, RD_ACT_UNDRAIN, &r));
    CHECK_STR(r.method, "POST");
    CHECK_STR(r.path, "/workers/{worker}/undrain");
    CHECK(r.body == NULL);
    /* a profile with actions: what it does not declare is unsupported (no default) */
    CHECK(!route_for(&p, RD_ACT_DRAIN, &r));
    CHECK(!route_for(&p, RD_ACT_ACTIVATE, &r));
    CHECK(!route_for(&p, RD_ACT__COUNT, &r));
    profile_free(&p);
    diags_free(&d);

    /* no actions at all (or no profile): the default contract */
    static const struct {
        rd_action kind;
        const char *method, *path;
        bool body;
    } def[] = {
        { RD_ACT_RETRY, "POST", "/executions/{id}/retry", true },
        { RD_ACT_DRAIN, "POST", "/workers/{worker}/drain", true },
        { RD_ACT_UNDRAIN, "POST", "/workers/{worker}/undrain", false },
        { RD_ACT_DEACTIVATE, "POST", "/workers/{worker}/deactivate", true },
        { RD_ACT_ACTIVATE, "POST", "/workers/{worker}/activate", false },
    };
    for (size_t i = 0; i < sizeof def / sizeof *def; i++) {
        memset(&r, 0, sizeof r);
        CHECK_MSG(route_for(NULL, def[i].kind, &r), def[i].path);
        CHECK_STR(r.method, def[i].method);
        CHECK_STR(r.path, def[i].path);
        CHECK_MSG((r.body != NULL) == def[i].body, def[i].path);
    }
    CHECK(!route_for(NULL, (rd_action)-1, &r));
}

/* ---- path templates ---------------------------------------------------------------- */

static void test_paths(void)
{
    static const struct {
        const char *tmpl, *id, *want;
    } cases[] = {
        { "/executions/{id}/retry", "1042", "/executions/1042/retry" },
        { "/executions/{id}/retry", "a/b", "/executions/a%2Fb/retry" },
        { "/executions/{id}/retry", "a b", "/executions/a%20b/retry" },
        { "/executions/{id}/retry", "../admin", "/executions/..%2Fadmin/retry" },
        { "/executions/{id}/retry", "x?y=1#z", "/executions/x%3Fy%3D1%23z/retry" },
        { "/executions/{id}/retry", "100%", "/executions/100%25/retry" },
        { "/executions/{id}/retry", "a&b+c", "/executions/a%26b%2Bc/retry" },
        { "/executions/{id}/retry", "\xc3\xa9", "/executions/%C3%A9/retry" },
        { "/executions/{id}/retry", "t-1_2.3~4", "/executions/t-1_2.3~4/retry" },
        { "/executions/{id}/retry", "...", "/executions/.../retry" },
        { "/executions/{id}/retry", ".x", "/executions/.x/retry" },
        { "/executions/{id}/retry", "%2e%2e", "/executions/%252e%252e/retry" },
        { "/executions/{id}/retry", "./..", "/executions/.%2F../retry" },
        { "/x/{id}.json", ".", NULL },   /* refused: every "." value is */
        { "/x/{id}/{id}", "a b", "/x/a%20b/a%20b" },
        /* what is not a known placeholder stays as written */
        { "/x/{nope}/{id}", "1", "/x/{nope}/1" },
        { "/x/{id", "1", "/x/{id" },
        { "/x/{}", "1", "/x/{}" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_tvars v = { .id = cases[i].id };
        char why[128] = "";
        char *got = template_expand(cases[i].tmpl, &v, true, why, sizeof why);
        CHECK_STR(got, cases[i].want);
        CHECK_MSG(cases[i].want || strstr(why, "not sent"), why);
        /* nothing but unreserved characters, '/' of the template and %XX escapes */
        for (const char *p = got; p && *p; p++)
            CHECK_MSG(isalnum((unsigned char)*p) || strchr("-_.~/%{}", *p), cases[i].want);
        free(got);
    }

    /* every placeholder, task and worker and operator too */
    rd_tvars all = { .id = "i d", .task = "t/k", .worker = "w 1", .reason = "r?",
                     .operator_ = "o@x" };
    char why[128] = "";
    char *got = template_expand("/{task}/{id}/{worker}/{reason}/{operator}", &all, true, why,
                                sizeof why);
    CHECK_STR(got, "/t%2Fk/i%20d/w%201/r%3F/o%40x");
    free(got);

    /* a placeholder without a value: no request, and the reason names it */
    rd_tvars none = { .id = "1" };
    why[0] = '\0';
    got = template_expand("/workers/{worker}/drain", &none, true, why, sizeof why);
    CHECK(got == NULL);
    CHECK_MSG(strstr(why, "{worker}") != NULL, why);
    free(got);
}

/* ---- dot segments (issue 32) ------------------------------------------------------- */

#define DOT_WHY "not sent: an empty, \".\" or \"..\" path segment would reach another route"

/* An empty, "." or ".." value is never sent: libcurl or the server would remove the
 * segment and the request would reach another route (POST /api/v1/executions/../retry is
 * POST /api/v1/retry). The reason names the placeholder and the value. */
static void test_dot_values(void)
{
    static const struct {
        const char *tmpl;
        rd_tvars v;
        const char *why;
    } cases[] = {
        { "/executions/{id}/retry", { .id = ".." }, "{id} is \"..\": " DOT_WHY },
        { "/executions/{id}/retry", { .id = "." }, "{id} is \".\": " DOT_WHY },
        { "/executions/{id}/retry", { .id = "" }, "{id} is empty: " DOT_WHY },
        { "/executions/{id}", { .id = ".." }, "{id} is \"..\": " DOT_WHY },
        { "/v1/tasks/{task}/s/{id}", { .id = "s", .task = ".." }, "{task} is \"..\": " DOT_WHY },
        { "/workers/{worker}/drain", { .worker = "" }, "{worker} is empty: " DOT_WHY },
        { "/r/{reason}", { .reason = "." }, "{reason} is \".\": " DOT_WHY },
        { "/o/{operator}/x", { .operator_ = ".." }, "{operator} is \"..\": " DOT_WHY },
        /* part of a segment, or in the query: refused all the same (never a real target) */
        { "/x/{id}.json", { .id = "." }, "{id} is \".\": " DOT_WHY },
        { "/x?id={id}", { .id = "" }, "{id} is empty: " DOT_WHY },
        /* a value that makes a dot segment with the template's own text (%2E is a dot) */
        { "/x/%{id}/y", { .id = "2e" }, "the path segment %{id} is \"%2e\": " DOT_WHY },
        { "/x/.%{id}", { .id = "2E" }, "the path segment .%{id} is \".%2E\": " DOT_WHY },
        { "/x/{id}%2e?q", { .id = "%2e" }, NULL },   /* '%' is escaped: "%252e%2e" */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char why[256] = "";
        char *got = template_expand(cases[i].tmpl, &cases[i].v, true, why, sizeof why);
        if (cases[i].why) {
            CHECK_STR(got, NULL);
            CHECK_STR(why, cases[i].why);
        } else {
            CHECK_STR(got, "/x/%252e%2e?q");
        }
        free(got);
    }
    /* the same values in a JSON body are plain text: sent as they are */
    rd_tvars v = { .id = "..", .reason = ".", .operator_ = "" };
    char why[256] = "";
    char *body = template_expand("{\"id\":\"{id}\",\"r\":\"{reason}\",\"o\":\"{operator}\"}",
                                 &v, false, why, sizeof why);
    CHECK_STR(body, "{\"id\":\"..\",\"r\":\".\",\"o\":\"\"}");
    free(body);
}

enum { MAX_PROFILES = 32, MAX_ROUTES = 128 };

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shipped profiles' paths, sorted (allocated), and their number. */
static size_t shipped_profiles(char **paths)
{
    char dir[1024];
    const char *src = getenv("REDRIVE_TEST_SRCDIR");
    snprintf(dir, sizeof dir, "%s/../../profiles", src ? src : "tests/actions");
    DIR *dp = opendir(dir);
    CHECK_MSG(dp != NULL, dir);
    size_t n = 0;
    for (struct dirent *e; dp && (e = readdir(dp)) != NULL && n < MAX_PROFILES;) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".profile") != 0)
            continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        paths[n++] = strdup(path);
    }
    if (dp)
        closedir(dp);
    qsort(paths, n, sizeof *paths, name_cmp);
    return n;
}

/* Every placeholder of a route's path, with each of "", "." and ".." (the others valid):
 * refused, the reason naming it; with valid values: a path. One line per route in out. */
static void check_route(const char *who, rd_action kind, const rd_route *r, char *out,
                        size_t cap)
{
    static const char *const names[] = { "id", "task", "worker", "reason", "operator" };
    static const char *const bad[] = { "", ".", ".." };
    size_t len = strlen(out);
    snprintf(out + len, cap - len, "%s %s %s %s\n", who, action_name(kind), r->method, r->path);
    rd_tvars ok = { "i-1", "t-1", "w-1", "r-1", "o-1" };
    char why[256] = "";
    char *got = template_expand(r->path, &ok, true, why, sizeof why);
    CHECK_MSG(got != NULL, r->path);
    free(got);
    int placeholders = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char ph[16];
        snprintf(ph, sizeof ph, "{%s}", names[k]);
        if (!strstr(r->path, ph))
            continue;
        placeholders++;
        for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
            rd_tvars v = ok;
            const char **slot[] = { &v.id, &v.task, &v.worker, &v.reason, &v.operator_ };
            *slot[k] = bad[b];
            char want[256], ctx[300];
            snprintf(want, sizeof want, "%s is %s%s%s: " DOT_WHY, ph, *bad[b] ? "\"" : "",
                     *bad[b] ? bad[b] : "empty", *bad[b] ? "\"" : "");
            snprintf(ctx, sizeof ctx, "%s %s %s = \"%s\"", who, r->path, ph, bad[b]);
            why[0] = '\0';
            got = template_expand(r->path, &v, true, why, sizeof why);
            CHECK_MSG(got == NULL, ctx);
            CHECK_MSG(strcmp(why, want) == 0, ctx);
            free(got);
        }
    }
    CHECK_MSG(placeholders > 0, r->path);
}

/* Every route of every shipped profile (an era's through its actions_from) and of the
 * default contract refuses a dot or empty value of each of its path placeholders. */
static void test_dot_values_every_route(void)
{
    static char seen[8192];
    seen[0] = '\0';
    rd_route r;
    for (int k = 0; k < RD_ACT__COUNT; k++)
        if (route_for(NULL, (rd_action)k, &r))
            check_route("(default)", (rd_action)k, &r, seen, sizeof seen);
    char *paths[MAX_PROFILES];
    size_t n = shipped_profiles(paths);
    for (size_t i = 0; i < n; i++) {
        rd_profile p;
        rd_diags d = { 0 };
        memset(&p, 0, sizeof p);
        CHECK_MSG(profile_load(paths[i], &p, &d) && d.n == 0, paths[i]);
        for (int k = 0; k < RD_ACT__COUNT; k++)
            if (route_for(&p, (rd_action)k, &r))
                check_route(p.name, (rd_action)k, &r, seen, sizeof seen);
        profile_free(&p);
        diags_free(&d);
        free(paths[i]);
    }
    CHECK_STR(seen,
              "(default) retry POST /executions/{id}/retry\n"
              "(default) drain POST /workers/{worker}/drain\n"
              "(default) undrain POST /workers/{worker}/undrain\n"
              "(default) deactivate POST /workers/{worker}/deactivate\n"
              "(default) activate POST /workers/{worker}/activate\n"
              "alakai retry POST /dashboard/executions/{id}/retry\n"
              "attune-era1 retry POST /api/v1/executions/{id}/retry\n"
              "attune-era1 drain POST /api/v1/workers/{worker}/cordon\n"
              "attune-era1 undrain POST /api/v1/workers/{worker}/uncordon\n"
              "attune-era1 deactivate POST /api/v1/workers/{worker}/deactivate\n"
              "attune-era1 activate POST /api/v1/workers/{worker}/activate\n"
              "attune-era2 retry POST /api/v1/executions/{id}/retry\n"
              "attune-era2 drain POST /api/v1/workers/{worker}/cordon\n"
              "attune-era2 undrain POST /api/v1/workers/{worker}/uncordon\n"
              "attune-era2 deactivate POST /api/v1/workers/{worker}/deactivate\n"
              "attune-era2 activate POST /api/v1/workers/{worker}/activate\n"
              "attune retry POST /api/v1/executions/{id}/retry\n"
              "attune drain POST /api/v1/workers/{worker}/cordon\n"
              "attune undrain POST /api/v1/workers/{worker}/uncordon\n"
              "attune deactivate POST /api/v1/workers/{worker}/deactivate\n"
              "attune activate POST /api/v1/workers/{worker}/activate\n"
              "openagents retry POST /executions/{id}/retry\n"
              "openagents drain POST /workers/{worker}/drain\n"
              "openagents undrain POST /workers/{worker}/undrain\n"
              "openagents deactivate POST /workers/{worker}/deactivate\n"
              "openagents activate POST /workers/{worker}/activate\n"
              "tasker retry PATCH /v1/tasks/{task}/workflow_steps/{id}\n"
              "tasker resolve PATCH /v1/dlq/entry/{id}\n");
}

/* ---- body templates ---------------------------------------------------------------- */

static char *reason_of(const char *json)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "reason");
    char *s = cJSON_IsString(r) ? strdup(r->valuestring) : NULL;
    cJSON_Delete(o);
    return s;
}

static void test_bodies(void)
{
    static const char *const reasons[] = {
        "plain",
        "",
        "say \"hi\"",
        "back\\slash and \\\" both",
        "line\nbreak\r\nand\ttab",
        "bell\x07 esc\x1b[31m nul-less \x01\x1f del\x7f",
        "\"}],\"admin\":true,\"x\":\"",
        "unicode \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
        "{reason} {id} stays literal",
        "</script>",
    };
    static const char tmpl[] = "{\"reason\":\"{reason}\",\"by\":\"{operator}\",\"n\":1}";
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++) {
        rd_tvars v = { .id = "1", .reason = reasons[i], .operator_ = "ops \"root\"" };
        char why[128] = "";
        char *body = template_expand(tmpl, &v, false, why, sizeof why);
        CHECK_MSG(body != NULL, reasons[i]);
        if (!body)
            continue;
        cJSON *o = cJSON_Parse(body);
        CHECK_MSG(cJSON_IsObject(o), body);
        CHECK_MSG(cJSON_GetArraySize(o) == 3, body);   /* no key smuggled in */
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "by");
        CHECK_MSG(cJSON_IsString(by) && strcmp(by->valuestring, "ops \"root\"") == 0, body);
        cJSON_Delete(o);
        char *back = reason_of(body);
        CHECK_STR(back, reasons[i]);
        /* a JSON string never holds a raw control character */
        for (const unsigned char *p = (const unsigned char *)body; *p; p++)
            CHECK_MSG(*p >= 0x20, body);
        free(back);
        free(body);
    }
    /* a body placeholder without a value: no request */
    rd_tvars v = { .id = "1" };
    char why[128] = "";
    char *body = template_expand(tmpl, &v, false, why, sizeof why);
    CHECK(body == NULL);
    CHECK_MSG(strstr(why, "{reason}") != NULL, why);
    free(body);
}

/* ---- Idempotency-Key --------------------------------------------------------------- */

#define N_KEYS 256

static void test_idempotency_keys(void)
{
    static char keys[N_KEYS][33];
    for (int i = 0; i < N_KEYS; i++) {
        memset(keys[i], 'Z', sizeof keys[i]);
        idem_key_new(keys[i]);
        CHECK(keys[i][32] == '\0');
        CHECK(strlen(keys[i]) == 32);
        for (int k = 0; k < 32; k++)
            CHECK_MSG(isdigit((unsigned char)keys[i][k]) ||
                          (keys[i][k] >= 'a' && keys[i][k] <= 'f'), keys[i]);
    }
    int dup = 0;
    for (int i = 0; i < N_KEYS; i++)
        for (int j = i + 1; j < N_KEYS; j++)
            dup += strcmp(keys[i], keys[j]) == 0;
    CHECK(dup == 0);
}

/* ---- responses --------------------------------------------------------------------- */

static void test_responses(void)
{
    static const struct {
        rd_action kind;
        long status;
        bool sent;
        const char *body;
        rd_result_code want;
        const char *msg;
        int attempt;
    } cases[] = {
        { RD_ACT_RETRY, 202, true, "{\"attempt\":3}", RD_RES_OK, "retried: attempt 3 queued", 3 },
        { RD_ACT_RETRY, 202, true, "{\"data\":{\"attempts\":2}}", RD_RES_OK,
          "retried: attempt 2 queued", 2 },
        { RD_ACT_RETRY, 202, true, "", RD_RES_OK, "retried: queued", 0 },
        { RD_ACT_RETRY, 200, true, "{\"attempt\":-4}", RD_RES_OK, "retried", 0 },
        { RD_ACT_DRAIN, 200, true, "{}", RD_RES_OK, "drained", 0 },
        { RD_ACT_RETRY, 401, true, "{}", RD_RES_UNAUTHORIZED, "not authorized", 0 },
        { RD_ACT_DRAIN, 403, true, "{}", RD_RES_FORBIDDEN, "your role may not drain workers", 0 },
        { RD_ACT_RETRY, 404, true, "{\"error\":\"nope\"}", RD_RES_NOT_FOUND,
          "no such execution", 0 },
        { RD_ACT_ACTIVATE, 404, true, "{}", RD_RES_NOT_FOUND, "no such worker", 0 },
        { RD_ACT_RETRY, 404, true, "{\"error\":\"no such route POST /x\"}", RD_RES_OTHER,
          "core has no such route POST /x", 0 },
        { RD_ACT_RETRY, 409, true, "{\"error\":{\"message\":\"retry budget exhausted\"}}",
          RD_RES_CONFLICT_BUDGET, "retry budget exhausted", 0 },
        { RD_ACT_RETRY, 409, true, "{\"message\":\"status is completed\"}",
          RD_RES_CONFLICT_STATUS, "status is completed", 0 },
        { RD_ACT_RETRY, 409, true, "", RD_RES_CONFLICT_STATUS, "conflict (HTTP 409)", 0 },
        { RD_ACT_RETRY, 502, true, "{}", RD_RES_BAD_GATEWAY, "core could not read the store", 0 },
        { RD_ACT_RETRY, 500, true, "{\"detail\":\"boom\"}", RD_RES_OTHER, "HTTP 500: boom", 0 },
        { RD_ACT_RETRY, 503, true, "down for\nmaintenance", RD_RES_OTHER, "HTTP 503: down for", 0 },
        { RD_ACT_RETRY, 0, false, NULL, RD_RES_UNREACHABLE, "core unreachable (not applied): x", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rd_result r;
        memset(&r, 0, sizeof r);
        r.action = cases[i].kind;
        rd_http_resp resp;
        memset(&resp, 0, sizeof resp);
        resp.status = cases[i].status;
        resp.request_sent = cases[i].sent;
        snprintf(resp.error, sizeof resp.error, "x");
        char *body = cases[i].body ? strdup(cases[i].body) : NULL;
        resp.body = body;
        resp.body_len = body ? strlen(body) : 0;
        result_from_response(&r, &resp);
        CHECK_MSG(r.code == cases[i].want, cases[i].msg);
        CHECK_STR(r.message, cases[i].msg);
        CHECK_MSG(r.attempt == cases[i].attempt, cases[i].msg);
        CHECK_MSG(r.http_status == cases[i].status, cases[i].msg);
        free(body);
    }
    /* no response after the request went out: maybe applied, re-send with the same key */
    rd_result r;
    memset(&r, 0, sizeof r);
    rd_http_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.request_sent = true;
    snprintf(resp.error, sizeof resp.error, "Operation timed out");
    result_from_response(&r, &resp);
    CHECK(r.code == RD_RES_MAYBE_APPLIED);
    CHECK(strstr(r.message, "may or may not have been applied") != NULL);
    CHECK(strstr(r.message, "same key") != NULL);
}

int main(void)
{
    test_routes();
    test_paths();
    test_dot_values();
    test_dot_values_every_route();
    test_bodies();
    test_idempotency_keys();
    test_responses();
    return check_done("test_request");
}
