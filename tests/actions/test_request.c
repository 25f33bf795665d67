/* Unit tests of the core-API request builder (src/actions/request.h): routes from a
 * profile or the default contract, path templates (URL-escaped), body templates
 * (JSON-escaped, the result must parse and give back the value), the Idempotency-Key and
 * the classification of responses. Behaviour only: no escaping routine is named here. */
#include <cjson/cJSON.h>
#include <ctype.h>
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
        { "/executions/{id}/retry", "", "/executions//retry" },
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
    test_bodies();
    test_idempotency_keys();
    test_responses();
    return check_done("test_request");
}
