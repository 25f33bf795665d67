/*
 * rd-source-watch: a long-running test driver for the broker sources (redis, rabbitmq,
 * worker probes). Runs the source set of one system on a libevent loop like the console
 * does, and answers line commands on stdin, so Python tests can change the stores and
 * watch the model follow (keyspace notifications, reconnects, memory):
 *
 *   rd-source-watch CONFIG [SYSTEM]      → prints "ready" once every source answered
 *   exec ID STATUS TIMEOUT_S             → "ok MS" when executions[] shows ID in STATUS
 *   gone ID TIMEOUT_S                    → "ok MS" when ID left executions[]
 *   state SOURCE STATE TIMEOUT_S         → "ok MS" when the source reaches STATE
 *   count STATUS                         → "count N"
 *   rss                                  → "rss KB" (VmRSS)
 *   refresh                              → "ok"
 *   interest LIST                        → "ok": the lists on screen, as the console
 *                                          tells its sources (execs,workers; "-" none)
 *   peek                                 → "ok" (asks for a DLQ peek, as the DLQ view does)
 *   idle TIMEOUT_S                       → "ok MS" when the peek/chain asked for came back
 *   fresh SOURCE TIMEOUT_S               → "ok MS" when SOURCE answered again (last_ok moved)
 *   json VIEW                            → "json " + the snapshot JSON of VIEW on one line
 *   filter TEXT TIMEOUT_S                → the executions page once answered (below);
 *                                          TEXT "-" clears the filter
 *   page DIR TIMEOUT_S                   → the same after paging (1 next, -1 back)
 *       "page n=N more=0|1 searched=ROWS first=ID last=ID"  (ID "-" when none)
 *   workers                              → "workers N first=ID"
 *   quit
 * On timeout: "timeout" plus what was seen.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/core/config.h"
#include "../../src/core/model_json.h"
#include "../../src/core/profile.h"
#include "../../src/io/clock.h"
#include "../../src/io/http.h"
#include "../../src/sources/sources.h"

typedef struct watch {
    struct event_base *base;
    rd_sources *src;
    rd_model *m;
    bool ready;
    char cmd[64], a1[256], a2[64];
    double deadline, started;
    double fresh_after;             /* `fresh`: the source's last_ok when asked */
    struct event *tick;
} watch;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const rd_execution *find_exec(const rd_model *m, const char *id)
{
    for (size_t i = 0; i < m->execs.n; i++)
        if (strcmp(m->execs.items[i].id, id) == 0)
            return &m->execs.items[i];
    return NULL;
}

static const rd_source_status *find_src(const rd_model *m, const char *name)
{
    for (size_t i = 0; i < m->sources.n; i++)
        if (strcmp(m->sources.items[i].name, name) == 0)
            return &m->sources.items[i];
    return NULL;
}

/* true when the pending command is satisfied (or timed out); prints the answer. */
static bool check(watch *w)
{
    if (!w->cmd[0])
        return false;
    double now = mono();
    bool done = false;
    if (strcmp(w->cmd, "idle") == 0) {
        done = sources_settled(w->src) && sources_idle(w->src);
        if (!done && now > w->deadline)
            printf("timeout busy\n");
    } else if (strcmp(w->cmd, "fresh") == 0) {
        const rd_source_status *s = find_src(w->m, w->a1);
        done = s && s->last_ok > w->fresh_after;
        if (!done && now > w->deadline)
            printf("timeout %s\n", s ? s->error : "absent");
    } else if (strcmp(w->cmd, "exec") == 0) {
        const rd_execution *e = find_exec(w->m, w->a1);
        done = e && strcmp(e->status, w->a2) == 0;
        if (!done && now > w->deadline)
            printf("timeout %s\n", e ? e->status : "absent");
    } else if (strcmp(w->cmd, "gone") == 0) {
        done = !find_exec(w->m, w->a1);
        if (!done && now > w->deadline)
            printf("timeout present\n");
    } else if (strcmp(w->cmd, "state") == 0) {
        const rd_source_status *s = find_src(w->m, w->a1);
        done = s && strcmp(src_state_name(s->state), w->a2) == 0;
        if (!done && now > w->deadline)
            printf("timeout %s %s\n", s ? src_state_name(s->state) : "absent",
                   s ? s->error : "");
    }
    if (strcmp(w->cmd, "page") == 0) {
        done = sources_idle(w->src);
        if (done) {
            const rd_model *m = w->m;
            printf("page n=%zu more=%d searched=%ld first=%s last=%s\n", m->execs.n,
                   (int)m->execs_more, m->execs_searched, m->execs.n ? m->execs.items[0].id : "-",
                   m->execs.n ? m->execs.items[m->execs.n - 1].id : "-");
        } else if (now > w->deadline) {
            printf("timeout page\n");
        }
    } else if (done)
        printf("ok %.0f %s\n", (now - w->started) * 1000,
               strcmp(w->cmd, "state") == 0 && find_src(w->m, w->a1)
                   ? find_src(w->m, w->a1)->error : "");
    if (done || now > w->deadline) {
        w->cmd[0] = '\0';
        fflush(stdout);
        return true;
    }
    return false;
}

static void on_change(void *ud)
{
    watch *w = ud;
    if (!w->ready && w->src && sources_settled(w->src)) {
        w->ready = true;
        printf("ready\n");
        fflush(stdout);
    }
    check(w);
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static void on_line(watch *w, const char *line)
{
    char cmd[64] = "", a1[256] = "", a2[64] = "";
    double t = 5;
    int n = sscanf(line, "%63s %255s %63s %lf", cmd, a1, a2, &t);
    if ((strcmp(cmd, "gone") == 0 || strcmp(cmd, "fresh") == 0) && n >= 3)
        t = atof(a2);
    if (strcmp(cmd, "idle") == 0 && n >= 2)
        t = atof(a1);
    if (strcmp(cmd, "quit") == 0) {
        event_base_loopbreak(w->base);
    } else if (strcmp(cmd, "rss") == 0) {
        printf("rss %ld\n", rss_kb());
    } else if (strcmp(cmd, "refresh") == 0) {
        sources_refresh(w->src);
        printf("ok\n");
    } else if (strcmp(cmd, "interest") == 0) {
        unsigned panels = 0;
        if (strstr(a1, "execs"))
            panels |= RD_PANEL_EXECS;
        if (strstr(a1, "workers"))
            panels |= RD_PANEL_WORKERS;
        sources_set_interest(w->src, panels);
        printf("ok\n");
    } else if (strcmp(cmd, "peek") == 0) {
        sources_peek_dlq(w->src, false);
        printf("ok\n");
    } else if (strcmp(cmd, "json") == 0) {
        char *j = model_to_json_at(w->m, a1, clock_wall());
        for (char *c = j; c && *c; c++)
            if (*c == '\n' || *c == '\t')
                *c = ' ';            /* JSON strings escape both: one line is the same JSON */
        printf("json %s\n", j ? j : "");
        free(j);
    } else if (strcmp(cmd, "workers") == 0) {
        printf("workers %zu first=%s\n", w->m->workers.n,
               w->m->workers.n ? w->m->workers.items[0].id : "-");
    } else if (strcmp(cmd, "filter") == 0 || strcmp(cmd, "page") == 0) {
        if (strcmp(cmd, "filter") == 0) {
            rd_exec_filter f = { .text = strcmp(a1, "-") == 0 ? NULL : a1 };   /* - clears */
            sources_set_filter(w->src, &f);
        } else {
            sources_page(w->src, atoi(a1));
        }
        snprintf(w->cmd, sizeof w->cmd, "page");
        w->started = mono();
        w->deadline = w->started + (n >= 3 ? atof(a2) : 10);
        check(w);
    } else if (strcmp(cmd, "count") == 0) {
        long c = 0;
        for (size_t i = 0; i < w->m->counts.n; i++)
            if (strcmp(w->m->counts.items[i].status, a1) == 0)
                c = w->m->counts.items[i].count;
        printf("count %ld\n", c);
    } else {
        snprintf(w->cmd, sizeof w->cmd, "%s", cmd);
        snprintf(w->a1, sizeof w->a1, "%s", a1);
        snprintf(w->a2, sizeof w->a2, "%s", a2);
        const rd_source_status *fs = find_src(w->m, a1);
        w->fresh_after = fs ? fs->last_ok : 0;
        w->started = mono();
        w->deadline = w->started + t;
        check(w);
    }
    fflush(stdout);
}

static void on_stdin(evutil_socket_t fd, short what, void *arg)
{
    watch *w = arg;
    static char buf[4096];
    static size_t len;
    ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
    if (n <= 0) {
        event_base_loopbreak(w->base);
        return;
    }
    len += (size_t)n;
    buf[len] = '\0';
    char *nl;
    while ((nl = strchr(buf, '\n'))) {
        *nl = '\0';
        on_line(w, buf);
        len -= (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, len + 1);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    check(arg);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rd-source-watch CONFIG [SYSTEM]\n");
        return 2;
    }
    rd_config cfg = {0};
    rd_profile prof = {0};
    rd_diags d = {0};
    rd_system_cfg *sys = NULL;
    if (!config_load(argv[1], &cfg, &d) || !(sys = config_find(&cfg, argc > 2 ? argv[2] : NULL)) ||
        !profile_load(sys->profile, &prof, &d)) {
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "%s\n", d.msgs[i]);
        return 2;
    }
    watch w = { .base = event_base_new(), .m = model_new() };
    rd_http *http = http_new(w.base);
    w.src = sources_new(w.base, http, sys, &prof, w.m, on_change, &w);
    struct event *in = event_new(w.base, 0, EV_READ | EV_PERSIST, on_stdin, &w);
    event_add(in, NULL);
    w.tick = event_new(w.base, -1, EV_PERSIST, on_tick, &w);
    struct timeval tv = { 0, 100000 };
    event_add(w.tick, &tv);
    sources_start(w.src);
    on_change(&w);
    event_base_dispatch(w.base);
    event_free(in);
    event_free(w.tick);
    sources_free(w.src);
    http_free(http);
    model_free(w.m);
    event_base_free(w.base);
    profile_free(&prof);
    config_free(&cfg);
    diags_free(&d);
    return 0;
}
