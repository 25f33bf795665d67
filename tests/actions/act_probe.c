/*
 * Test helper for tests/actions: exercises rd_http and the journal reader directly.
 *   rd-act-probe http METHOD URL [--body B] [--header H]... [--timeout MS]
 *                [--max-body N] [--cacert F] [--cancel-after MS] [--count N]
 *                [--credential yes] [--insecure-ok yes]
 *   rd-act-probe whoami CORE_URL AUTH [--insecure yes]
 *                (the send-time credential rule on a config that never went through the
 *                config parser: token env:RD_PROBE_TOKEN, login "ops" with password
 *                env:RD_PROBE_PASSWORD)
 *   rd-act-probe journal-tail PATH MAX
 * Prints one JSON object per finished request (or per entry).
 */
#include <cjson/cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/actions/journal.h"
#include "src/actions/whoami.h"
#include "src/core/config.h"
#include "src/io/http.h"

typedef struct probe {
    struct event_base *base;
    rd_http *http;
    int calls, outstanding;
    uint64_t ids[64];
} probe;

static void on_resp(const rd_http_resp *r, void *ud)
{
    probe *p = ud;
    p->calls++;
    p->outstanding--;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "status", (double)r->status);
    cJSON_AddNumberToObject(o, "curl_code", r->curl_code);
    cJSON_AddBoolToObject(o, "timed_out", r->timed_out);
    cJSON_AddBoolToObject(o, "truncated", r->truncated);
    cJSON_AddBoolToObject(o, "request_sent", r->request_sent);
    cJSON_AddNumberToObject(o, "body_len", (double)r->body_len);
    cJSON_AddStringToObject(o, "error", r->error);
    cJSON_AddNumberToObject(o, "elapsed_s", r->elapsed_s);
    char *b = strndup(r->body ? r->body : "", 2000);
    cJSON_AddStringToObject(o, "body", b);
    free(b);
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    cJSON_Delete(o);
    if (p->outstanding <= 0)
        event_base_loopexit(p->base, NULL);
}

static void on_cancel(evutil_socket_t fd, short what, void *arg)
{
    probe *p = arg;
    (void)fd; (void)what;
    for (int i = 0; i < 64 && p->ids[i]; i++)
        http_cancel(p->http, p->ids[i]);
    printf("{\"cancelled\":true,\"pending\":%zu}\n", http_pending(p->http));
    event_base_loopexit(p->base, NULL);
}

static int run_http(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    const char *headers[32] = {0};
    int nh = 0, count = 1;
    long cancel_after = -1;
    rd_http_req req = {.method = argv[2], .url = argv[3]};
    for (int i = 4; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--body")) req.body = v;
        else if (!strcmp(k, "--header") && nh < 31) headers[nh++] = v;
        else if (!strcmp(k, "--timeout")) req.timeout_ms = atol(v);
        else if (!strcmp(k, "--connect-timeout")) req.connect_timeout_ms = atol(v);
        else if (!strcmp(k, "--max-body")) req.max_body = (size_t)atol(v);
        else if (!strcmp(k, "--cacert")) req.cacert = v;
        else if (!strcmp(k, "--cancel-after")) cancel_after = atol(v);
        else if (!strcmp(k, "--count")) count = atoi(v);
        else if (!strcmp(k, "--credential")) req.credential = !strcmp(v, "yes");
        else if (!strcmp(k, "--insecure-ok")) req.insecure_ok = !strcmp(v, "yes");
        else return 2;
    }
    req.headers = headers;
    probe p = {.base = event_base_new()};
    p.http = http_new(p.base);
    for (int i = 0; i < count && i < 64; i++) {
        p.ids[i] = http_start(p.http, &req, on_resp, &p);
        if (!p.ids[i]) {
            fprintf(stderr, "http_start failed: %s\n", http_why(p.http));
            return 1;
        }
        p.outstanding++;
    }
    struct event *cancel = NULL;
    if (cancel_after >= 0) {
        cancel = evtimer_new(p.base, on_cancel, &p);
        struct timeval tv = {cancel_after / 1000, (cancel_after % 1000) * 1000};
        evtimer_add(cancel, &tv);
    }
    event_base_dispatch(p.base);
    if (cancel)
        event_free(cancel);
    http_free(p.http);
    event_base_free(p.base);
    printf("{\"calls\":%d}\n", p.calls);
    return 0;
}

typedef struct who_probe {
    struct event_base *base;
    int calls;
} who_probe;

static void on_who(const rd_whoami *w, void *ud)
{
    who_probe *p = ud;
    p->calls++;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", w->ok);
    cJSON_AddNumberToObject(o, "http_status", (double)w->http_status);
    cJSON_AddStringToObject(o, "identity", w->identity);
    cJSON_AddStringToObject(o, "why", w->why);
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    cJSON_Delete(o);
    event_base_loopexit(p->base, NULL);
}

static int run_whoami(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    static char name[] = "probe", token[] = "env:RD_PROBE_TOKEN", login[] = "ops",
                password[] = "env:RD_PROBE_PASSWORD", header[] = "X-API-Key";
    rd_system_cfg cfg = {.name = name, .core.url = argv[2], .core.auth = argv[3], .core.token = token,
                         .core.login = login, .core.password = password, .core.api_key_header = header,
                         .http.insecure = argc >= 6 && !strcmp(argv[4], "--insecure") &&
                                     !strcmp(argv[5], "yes")};
    who_probe p = {.base = event_base_new()};
    rd_http *http = http_new(p.base);
    rd_auth *auth = auth_new(p.base, http, &cfg);
    whoami_req *w = whoami_start(auth, http, &cfg, on_who, &p);
    struct timeval limit = {10, 0};
    event_base_loopexit(p.base, &limit);
    if (w)
        event_base_dispatch(p.base);
    if (!p.calls)
        whoami_cancel(w);
    auth_free(auth);
    http_free(http);
    event_base_free(p.base);
    printf("{\"calls\":%d}\n", p.calls);
    return 0;
}

static int run_journal(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    rd_journal_entry *e;
    size_t n;
    char why[256] = "";
    bool ok = journal_read_tail(argv[2], (size_t)atol(argv[3]), &e, &n, why, sizeof why);
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "malformed", e[i].malformed);
        cJSON_AddStringToObject(o, "action", e[i].action ? e[i].action : "");
        cJSON_AddStringToObject(o, "operator", e[i].operator_ ? e[i].operator_ : "");
        cJSON_AddStringToObject(o, "code", e[i].code ? e[i].code : "");
        cJSON_AddNumberToObject(o, "targets", (double)e[i].n_targets);
        cJSON_AddNumberToObject(o, "http_status", (double)e[i].http_status);
        char *s = cJSON_PrintUnformatted(o);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
    }
    journal_entries_free(e, n);
    printf("{\"ok\":%s,\"n\":%zu}\n", ok ? "true" : "false", n);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "http"))
        return run_http(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "whoami"))
        return run_whoami(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "journal-tail"))
        return run_journal(argc, argv);
    fprintf(stderr, "usage: rd-act-probe http METHOD URL [opts] | whoami CORE AUTH "
            "[--insecure yes] | journal-tail PATH MAX\n");
    return 2;
}
