/* URL and JSON escaping (src/io/url.c) and the action layer's route templates built on
 * it (src/actions/request.c): quotes, control characters, '/' in an id, invalid UTF-8. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/actions/request.h"
#include "../../src/io/url.h"
#include "../unit/check.h"

static void test_path(void)
{
    static const struct { const char *in, *want; } t[] = {
        {"abc-1.2_3~", "abc-1.2_3~"},
        {"", ""},
        {"a/b", "a%2Fb"},
        {"../admin", "..%2Fadmin"},
        {"a b", "a%20b"},
        {"100%", "100%25"},
        {"?x=1#f&y", "%3Fx%3D1%23f%26y"},
        {"\"quoted\"", "%22quoted%22"},
        {"tab\there", "tab%09here"},
        {"caf\xc3\xa9", "caf%C3%A9"},
        {"\xff\xfe", "%FF%FE"},               /* invalid UTF-8: byte for byte */
        {"worker.1.executions", "worker.1.executions"},
        {"/", "%2F"},                         /* the default RabbitMQ vhost */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char *got = url_escape_path(t[i].in);
        CHECK_STR(got, t[i].want);
        free(got);
    }
}

static void test_utf8(void)
{
    static const struct { const char *s; bool valid; } t[] = {
        {"", true},
        {"plain ascii", true},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", true},  /* é € 😀 */
        {"\xef\xbf\xbd", true},                /* U+FFFD itself */
        {"\xf4\x8f\xbf\xbf", true},            /* U+10FFFF */
        {"\x7f\x01", true},                    /* controls are valid UTF-8 */
        {"\xff", false},
        {"\x80", false},                       /* lone continuation */
        {"\xc3", false},                       /* truncated */
        {"\xe2\x82", false},
        {"\xc0\xaf", false},                   /* overlong '/' */
        {"\xe0\x80\xaf", false},               /* overlong */
        {"\xed\xa0\x80", false},               /* surrogate U+D800 */
        {"\xf4\x90\x80\x80", false},           /* above U+10FFFF */
        {"ok\xfe", false},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char ctx[16];
        snprintf(ctx, sizeof ctx, "row %zu", i);
        CHECK_MSG(url_utf8_valid(t[i].s) == t[i].valid, ctx);
    }
}

static void test_json(void)
{
    static const struct { const char *in, *want; } t[] = {
        {"plain", "plain"},
        {"", ""},
        {"say \"no\"", "say \\\"no\\\""},
        {"back\\slash", "back\\\\slash"},
        {"line\nbreak\r\ttab", "line\\nbreak\\r\\ttab"},
        {"\x01\x1f", "\\u0001\\u001f"},
        {"\b\f", "\\b\\f"},
        {"a/b", "a/b"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},
        {"\xe2\x80\xae" "rtl", "\xe2\x80\xae" "rtl"},       /* valid: kept (sanitized on display) */
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char why[128] = "";
        char *got = url_escape_json(t[i].in, why, sizeof why);
        CHECK_STR(got, t[i].want);
        /* round trip: the escaped text in quotes parses back to the input */
        char *doc = got ? malloc(strlen(got) + 3) : NULL;
        if (doc) {
            sprintf(doc, "\"%s\"", got);
            cJSON *v = cJSON_Parse(doc);
            CHECK(cJSON_IsString(v) && strcmp(v->valuestring, t[i].in) == 0);
            cJSON_Delete(v);
        }
        free(doc);
        free(got);
    }
    static const char *const bad[] = {"\xff", "reason \xc3", "\xc0\xaf", "\xed\xa0\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char why[128] = "";
        char *got = url_escape_json(bad[i], why, sizeof why);
        CHECK(got == NULL);
        CHECK_STR(why, "the value is not valid UTF-8");
        free(got);
    }
}

static void test_templates(void)
{
    rd_tvars v = {.id = "exec/42 x", .worker = "w\"1", .reason = "say \"no\"\n\x01",
                  .operator_ = "ops"};
    char why[200] = "";
    char *p = template_expand("/executions/{id}/retry", &v, true, why, sizeof why);
    CHECK_STR(p, "/executions/exec%2F42%20x/retry");
    free(p);
    p = template_expand("/workers/{worker}/drain?by={operator}", &v, true, why, sizeof why);
    CHECK_STR(p, "/workers/w%221/drain?by=ops");
    free(p);
    p = template_expand("{\"reason\":\"{reason}\",\"id\":\"{id}\"}", &v, false, why,
                        sizeof why);
    CHECK_STR(p, "{\"reason\":\"say \\\"no\\\"\\n\\u0001\",\"id\":\"exec/42 x\"}");
    cJSON *o = p ? cJSON_Parse(p) : NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "reason");
    CHECK(cJSON_IsString(r) && strcmp(r->valuestring, v.reason) == 0);
    cJSON_Delete(o);
    free(p);
    /* invalid UTF-8: refused in a JSON body, carried byte for byte in a path */
    rd_tvars bad = {.id = "id\xff", .reason = "bad \xc3("};
    p = template_expand("{\"reason\":\"{reason}\"}", &bad, false, why, sizeof why);
    CHECK(p == NULL);
    CHECK_STR(why, "{reason} is not valid UTF-8: refused");
    free(p);
    p = template_expand("/executions/{id}/retry", &bad, true, why, sizeof why);
    CHECK_STR(p, "/executions/id%FF/retry");
    free(p);
    p = template_expand("/executions/{task}/retry", &bad, true, why, sizeof why);
    CHECK(p == NULL);
    CHECK_STR(why, "the route needs {task}, which this target lacks");
    free(p);
}

static void test_urls(void)
{
    static const struct { const char *base, *path, *want; } j[] = {
        {"http://core:8080", "/executions", "http://core:8080/executions"},
        {"http://core:8080/", "/executions", "http://core:8080/executions"},
        {"http://core:8080//", "executions", "http://core:8080/executions"},
        {"https://h/api", "auth/me", "https://h/api/auth/me"},
    };
    for (size_t i = 0; i < sizeof j / sizeof *j; i++) {
        char *got = url_join(j[i].base, j[i].path);
        CHECK_STR(got, j[i].want);
        free(got);
    }
    static const struct { const char *url, *host_port; bool http, https, loopback; } u[] = {
        {"http://10.0.0.7:8081", "10.0.0.7:8081", true, false, false},
        {"http://10.0.0.7", "10.0.0.7:80", true, false, false},
        {"https://worker.internal/", "worker.internal:443", false, true, false},
        {"http://user:pw@127.0.0.1:9/x", "127.0.0.1:9", true, false, true},
        {"http://[::1]:8081/health", "[::1]:8081", true, false, true},
        {"HTTP://localhost:1", "localhost:1", true, false, true},
        {"ftp://127.0.0.1/", "127.0.0.1:21", false, false, true},
        {"http://127.0.0.1.evil.example/", "127.0.0.1.evil.example:80", true, false, false},
        {"not a url", NULL, false, false, false},
    };
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        char *hp = url_host_port(u[i].url);
        CHECK_STR(hp, u[i].host_port);
        free(hp);
        CHECK_MSG(url_is_http(u[i].url) == u[i].http, u[i].url);
        CHECK_MSG(url_is_https(u[i].url) == u[i].https, u[i].url);
        CHECK_MSG(url_host_is_loopback(u[i].url) == u[i].loopback, u[i].url);
    }
}

int main(void)
{
    test_path();
    test_utf8();
    test_json();
    test_templates();
    test_urls();
    return check_done("io_url");
}
