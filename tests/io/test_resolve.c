/* Name resolution (src/io/resolve.c): the IP-literal and loopback tables, answers that
 * always come later from the loop, and cancellation that really stops the callback
 * (evdns itself still calls back after evdns_getaddrinfo_cancel). */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/core/hostrule.h"
#include "../../src/io/resolve.h"
#include "../unit/check.h"

static void test_literals(void)
{
    static const struct { const char *host; bool literal, loopback; } t[] = {
        {"127.0.0.1", true, true},
        {"127.255.0.9", true, true},
        {"10.0.0.7", true, false},
        {"128.0.0.1", true, false},
        {"0.0.0.0", true, false},
        {"255.255.255.255", true, false},
        {"::1", true, true},
        {"::", true, false},
        {"::2", true, false},
        {"fe80::1", true, false},
        {"2001:db8::42", true, false},
        {"::ffff:127.0.0.1", true, true},
        {"::ffff:10.0.0.1", true, false},
        {"[::1]", false, true},             /* brackets: a URL's host, loopback accepts */
        {"[10.0.0.1]", false, false},
        {"localhost", false, true},
        {"LocalHost", false, true},
        {"localhost.", false, false},
        {"db.internal", false, false},
        {"256.1.1.1", false, false},
        {"1.2.3", false, false},
        {"01.2.3.4", false, false},
        {"1.2.3.4 ", false, false},
        {" 1.2.3.4", false, false},
        {"1.2.3.4:5432", false, false},
        {"fe80::1%eth0", false, false},
        {"", false, false},
        {NULL, false, false},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "'%s'", t[i].host ? t[i].host : "(null)");
        CHECK_MSG(resolve_ip_literal(t[i].host) == t[i].literal, ctx);
        CHECK_MSG(host_is_loopback(t[i].host) == t[i].loopback, ctx);
    }
}

typedef struct got {
    struct event_base *base;
    int calls;
    char ip[64];
    char why[300];
} got;

static void on_answer(const char *ip, const char *why, void *ud)
{
    got *g = ud;
    g->calls++;
    snprintf(g->ip, sizeof g->ip, "%s", ip ? ip : "");
    snprintf(g->why, sizeof g->why, "%s", why ? why : "");
    event_base_loopbreak(g->base);
}

static void run_for(struct event_base *base, long ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static void test_answers(void)
{
    static const struct { const char *host; const char *ip; const char *why; } t[] = {
        {"10.1.2.3", "10.1.2.3", NULL},
        {"::1", "::1", NULL},
        {"", NULL, "no host name to resolve"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        got g = {0};
        g.base = event_base_new();
        rd_resolver *r = resolve_new(g.base);
        rd_lookup *l = resolve_start(r, t[i].host, on_answer, &g);
        CHECK(l != NULL);
        CHECK_MSG(g.calls == 0, t[i].host);          /* never from inside resolve_start */
        run_for(g.base, 1000);
        CHECK_MSG(g.calls == 1, t[i].host);
        CHECK_STR(g.ip[0] ? g.ip : NULL, t[i].ip);
        if (t[i].why)
            CHECK_MSG(strstr(g.why, t[i].why) != NULL, g.why);
        resolve_free(r);
        event_base_free(g.base);
    }
}

/* localhost from the hosts file: answered by evdns inside evdns_getaddrinfo, handed
 * over from the loop; IPv4 preferred. */
static void test_hosts_file(void)
{
    FILE *f = fopen("/etc/hosts", "r");
    char line[512];
    bool has = false;
    while (f && fgets(line, sizeof line, f))
        has = has || (strncmp(line, "127.0.0.1", 9) == 0 && strstr(line, "localhost"));
    if (f)
        fclose(f);
    if (!has) {
        printf("io_resolve: no '127.0.0.1 localhost' in /etc/hosts: skipped\n");
        return;
    }
    got g = {0};
    g.base = event_base_new();
    rd_resolver *r = resolve_new(g.base);
    resolve_start(r, "localhost", on_answer, &g);
    CHECK(g.calls == 0);
    run_for(g.base, 3000);
    CHECK(g.calls == 1);
    CHECK_STR(g.ip, "127.0.0.1");
    /* the same, cancelled before the loop hands it over: no callback */
    g.calls = 0;
    resolve_cancel(resolve_start(r, "localhost", on_answer, &g));
    run_for(g.base, 100);
    CHECK(g.calls == 0);
    resolve_free(r);
    run_for(g.base, 50);
    event_base_free(g.base);
}

/* A name that goes out to the nameservers: cancelled at once, or left pending when the
 * resolver is freed. evdns answers the cancellation later (EAI_CANCEL); our callback
 * must never run and nothing may touch freed memory (run under ASan to see it). */
static void test_cancel(void)
{
    got g = {0};
    g.base = event_base_new();
    rd_resolver *r = resolve_new(g.base);
    rd_lookup *a = resolve_start(r, "redrive-test-a.invalid", on_answer, &g);
    resolve_start(r, "redrive-test-b.invalid", on_answer, &g);
    resolve_cancel(a);
    resolve_cancel(NULL);                           /* NULL is fine */
    resolve_free(r);                                /* b still pending: cancelled here */
    run_for(g.base, 300);
    CHECK_MSG(g.calls == 0, g.why);
    event_base_free(g.base);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_resolve: guard alarm: resolution blocked\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(2);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    alarm(30);
    test_literals();
    test_answers();
    test_hosts_file();
    test_cancel();
    return check_done("io_resolve");
}
