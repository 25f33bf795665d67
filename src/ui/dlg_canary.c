/* The canary and the breaker of the console's whole-set retry (dlg_canary.h): the offer at
 * the confirmation, the outcome watched through a child `redrive batch show --json`, and
 * the verdicts, said as the CLI says them (actions/batchout.h). */
#include "dlg_canary.h"

#include <cjson/cJSON.h>
#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchout.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "../io/proc.h"
#include "app.h"
#include "draw.h"

static const double WATCH_EVERY_S = 2.0;
static const double WATCH_TIMEOUT_S = 120;
enum { CANARY_DEFAULT = 10, REASON_W = 80 };   /* the box: 86 columns inside at most */

/* CP_FINAL: the run ended, one more read of the outcome (the last part's) */
typedef enum { CP_CONFIRM, CP_SENDING, CP_WAITING, CP_REST, CP_FINAL, CP_ENDED } can_phase;

struct ui_canary {
    ui_app *app;
    dlgcan_cbs cbs;
    void *ud;
    bool retry, offered;       /* a retry has an outcome; a canary offered (over CANARY_OVER) */
    size_t n, send;            /* the canary's size (0 none), the set's */
    double wait_s, max;        /* batch_canary_wait, batch_max_refail (0..1) */
    bool editing;
    char typed[12];
    size_t typed_len;
    can_phase phase;
    char id[17];
    rd_proc *proc;             /* the watching child, NULL between reads */
    rd_event *tick;
    double wait_until;
    size_t canary_sent;
    rd_bout_counts c;          /* the last outcome read */
    bool have;                 /* c was read from the store */
    char why[300];             /* why it was not ("" when it was) */
    char passed[600];          /* the canary's verdict when it went on ("" none) */
    char reason[1000];         /* the pause's reason ("" none) */
};

ui_canary *dlgcan_new(ui_app *app, size_t send, bool retry, const dlgcan_cbs *cbs, void *ud)
{
    ui_canary *c = xcalloc(1, sizeof *c);
    const rd_system_cfg *sys = app_sys(app);
    c->app = app;
    if (cbs)
        c->cbs = *cbs;
    c->ud = ud;
    c->retry = retry;
    c->send = send;
    /* batch_canary = 0 says no canary: none offered */
    c->offered = retry && send > CANARY_OVER && !(sys && sys->batch_canary == 0);
    c->n = !c->offered ? 0 : sys && sys->batch_canary > 0 ? (size_t)sys->batch_canary : CANARY_DEFAULT;
    if (c->n >= send)
        c->n = 0;                         /* a canary of the whole set is the set */
    c->wait_s = sys && sys->batch_canary_wait_s > 0 ? sys->batch_canary_wait_s : 300;
    c->max = sys && sys->batch_max_refail >= 0 ? sys->batch_max_refail : 0.5;
    return c;
}

void dlgcan_bind(ui_canary *c, const dlgcan_cbs *cbs, void *ud)
{
    c->cbs = *cbs;
    c->ud = ud;
}

void dlgcan_free(ui_canary *c)
{
    if (!c)
        return;
    proc_cancel(c->proc);
    if (c->tick)
        loop_timer_free(c->tick);
    free(c);
}

bool dlgcan_editing(const ui_canary *c)
{
    return c && c->editing;
}

size_t dlgcan_size(const ui_canary *c)
{
    return c ? c->n : 0;
}

bool dlgcan_waiting(const ui_canary *c)
{
    return c && c->phase == CP_WAITING;
}

bool dlgcan_key(ui_canary *c, ui_key k)
{
    if (!c || !c->offered || c->phase != CP_CONFIRM)
        return false;
    if (!c->editing) {
        if (k != 'c')
            return false;
        c->editing = true;
        c->typed_len = 0;
        c->typed[0] = 0;
        return true;
    }
    if (k == (UK_FN | KEY_ENTER) || k == '\r' || k == '\n') {
        size_t v = c->typed_len ? strtoul(c->typed, NULL, 10) : c->n;
        if (v >= c->send) {
            ctx_msg(app_ctx(c->app), true, "canary: %zu is not fewer than the %zu to send (0: none)", v, c->send);
            return true;
        }
        c->n = v;
        c->editing = false;
        if (v)
            ctx_msg(app_ctx(c->app), false, "canary: %zu sent first", v);
        else
            ctx_msg(app_ctx(c->app), false, "canary: none");
    } else if (k == 27 || k == 7) {
        c->editing = false;
    } else if (k == (UK_FN | KEY_BACKSPACE) || k == 127 || k == 8) {
        if (c->typed_len)
            c->typed[--c->typed_len] = 0;
    } else if (k >= '0' && k <= '9' && c->typed_len + 1 < 8) {
        c->typed[c->typed_len++] = (char)k;
        c->typed[c->typed_len] = 0;
    }
    return true;
}

/* ---- the watcher: a child `redrive batch show ID --json`, its first line ---------------- */

static void watch_arm(ui_canary *c, double s);

/* The summary: the first line up to `,"items":[` (cli/batch_show.c) closed and parsed. */
static void on_line(const char *line, void *ud)
{
    ui_canary *c = ud;
    static const char tail[] = ",\"items\":[";
    size_t len = strlen(line), tl = sizeof tail - 1;
    if (line[0] != '{' || len <= tl || strcmp(line + len - tl, tail) != 0)
        return;                                /* an item, or the end */
    char *text = xasprintf("%.*s}", (int)(len - tl), line);
    cJSON *o = cJSON_Parse(text);
    free(text);
    const cJSON *out = o ? cJSON_GetObjectItemCaseSensitive(o, "outcome") : NULL;
    if (cJSON_IsObject(out)) {
        bool read = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "read"));
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(out, "why");
        snprintf(c->why, sizeof c->why, "%s", read ? "" : cJSON_IsString(w) ? w->valuestring : "not read");
        if (read) {
            static const char *const k[] = {"succeeded", "failed_again", "new_error", "running", "unread"};
            size_t v[5];
            for (int i = 0; i < 5; i++) {
                const cJSON *x = cJSON_GetObjectItemCaseSensitive(out, k[i]);
                v[i] = cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1e12 ? (size_t)x->valuedouble : 0;
            }
            c->c = (rd_bout_counts){v[0], v[1], v[2], v[3], v[4]};
            c->have = true;
        }
    }
    cJSON_Delete(o);
    app_request_paint(c->app);
}

static void judge(ui_canary *c);

static void on_end(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    ui_canary *c = ud;
    (void)out, (void)len;
    c->proc = NULL;
    if (!ok && !c->have && why && !c->why[0])
        snprintf(c->why, sizeof c->why, "redrive batch show %s: %s", c->id, why);
    judge(c);
    if (c->phase == CP_WAITING || c->phase == CP_REST)
        watch_arm(c, WATCH_EVERY_S);
}

static void watch_read(ui_canary *c)
{
    char exe[PATH_MAX];
    if (c->proc || !realpath("/proc/self/exe", exe))
        return;
    char a_batch[] = "batch", a_show[] = "show", a_json[] = "--json";
    char *argv[7] = {exe, a_batch, a_show, c->id, a_json, NULL, NULL};
    char *conf = app_config_path(c->app) ? xasprintf("--config=%s", app_config_path(c->app)) : NULL;
    argv[5] = conf;
    c->proc = proc_run_argv(app_base(c->app), argv, WATCH_TIMEOUT_S, on_line, on_end, c);
    free(conf);
    if (!c->proc) {
        snprintf(c->why, sizeof c->why, "cannot start redrive batch show");
        watch_arm(c, WATCH_EVERY_S);
    }
}

static void on_tick(int fd, short what, void *ud)
{
    ui_canary *c = ud;
    (void)fd, (void)what;
    if (c->phase == CP_WAITING && clock_mono() >= c->wait_until) {
        judge(c);
        return;
    }
    if (c->phase == CP_WAITING || c->phase == CP_REST)
        watch_read(c);
}

static void watch_arm(ui_canary *c, double s)
{
    if (!app_base(c->app))
        return;
    if (!c->tick)
        c->tick = loop_timer_new(app_base(c->app), on_tick, c);
    loop_timer_in(c->tick, s);
}

/* ---- the verdicts ------------------------------------------------------------------------ */

static void stop(ui_canary *c, const char *reason)
{
    snprintf(c->reason, sizeof c->reason, "%s", reason);
    c->phase = CP_ENDED;
    if (c->tick)
        loop_timer_stop(c->tick);
    c->cbs.stop(c->ud, c->reason);
}

static void judge(ui_canary *c)
{
    char share[500], reason[1000];
    if (c->phase == CP_REST && c->have &&
        bout_verdict(&c->c, c->max, BOUT_BREAKER_MIN) == BOUT_TRIP) {
        batch_share_line(&c->c, c->max, share, sizeof share);
        snprintf(reason, sizeof reason, "breaker: %s", share);
        stop(c, reason);
        return;
    }
    if (c->phase != CP_WAITING)
        return;
    bool all_in = c->have && !c->c.running && !c->c.unread;
    if (!all_in && clock_mono() < c->wait_until)
        return;
    if (!c->have || !bout_finished(&c->c)) {
        char line[300];
        bout_line(&c->c, line, sizeof line);
        snprintf(reason, sizeof reason, "canary: no outcome of its %zu retries within %.0fs%s%.200s (%.300s)",
                 c->canary_sent, c->wait_s, c->why[0] ? ": " : "", c->why, line);
        stop(c, reason);
        return;
    }
    batch_share_line(&c->c, c->max, share, sizeof share);
    if (bout_verdict(&c->c, c->max, 1) == BOUT_GO) {
        snprintf(c->passed, sizeof c->passed, "canary: %s: going on", share);
        c->phase = CP_REST;
        c->cbs.go(c->ud);
        return;
    }
    snprintf(reason, sizeof reason, "canary: %.500s", share);
    stop(c, reason);
}

void dlgcan_sending(ui_canary *c, const char *batch_id)
{
    snprintf(c->id, sizeof c->id, "%s", batch_id);
    c->phase = c->n ? CP_SENDING : CP_REST;
    if (c->phase == CP_REST && c->retry)
        watch_arm(c, WATCH_EVERY_S);
    else if (!c->retry)
        c->phase = CP_ENDED;
}

void dlgcan_wait(ui_canary *c, size_t sent)
{
    c->phase = CP_WAITING;
    c->canary_sent = sent;
    c->wait_until = clock_mono() + c->wait_s;
    watch_arm(c, 0.2);
}

void dlgcan_rest(ui_canary *c)
{
    c->phase = CP_REST;
    watch_arm(c, WATCH_EVERY_S);
}

void dlgcan_end(ui_canary *c)
{
    if (!c || c->phase == CP_ENDED || c->phase == CP_FINAL)
        return;
    bool watched = c->phase == CP_REST;
    c->phase = watched ? CP_FINAL : CP_ENDED;
    if (c->tick)
        loop_timer_stop(c->tick);
    if (watched)
        watch_read(c);    /* what the last part did: read once more (or by the read under way) */
}

/* ---- lines ------------------------------------------------------------------------------- */

static void breaker_line(const ui_canary *c, dlgcan_add add, void *ud)
{
    add(ud, TS_DIALOG, xasprintf("breaker: pauses the batch once %d outcomes are in and more than %.0f%% fail again",
                                 BOUT_BREAKER_MIN, c->max * 100));
}

void dlgcan_confirm_lines(const ui_canary *c, dlgcan_add add, void *ud)
{
    if (!c || !c->retry)
        return;
    if (c->editing)
        add(ud, TS_DIALOG_DANGER, xasprintf("canary: how many first? %s_   (Enter: set, 0: none, Escape: back)",
                                            c->typed));
    else if (c->offered && c->n)
    {
        add(ud, TS_DIALOG, xasprintf("canary: %zu sent first, their outcome waited for up to %.0fs;", c->n, c->wait_s));
        add(ud, TS_DIALOG, xasprintf("  the rest only if at most %.0f%% fail again (c: change, 0: none)", c->max * 100));
    }
    else if (c->offered)
        add(ud, TS_DIALOG_DANGER, xstrdup("canary: none: everything is sent at once (c: send some first)"));
    breaker_line(c, add, ud);
}

typedef struct wrap_ud { dlgcan_add add; void *ud; int slot, n; bool indent; } wrap_ud;

static void wrap_add(const char *s, size_t n, void *ud)
{
    wrap_ud *w = ud;
    w->add(w->ud, w->slot, xasprintf("%s%.*s", w->indent || w->n++ ? "  " : "", (int)n, s));
}

/* text whole, never cut by the box: wrapped, the lines after the first (or all: indent)
 * indented; sanitized first (it may hold a store's words). */
static void add_wrapped(const ui_canary *c, dlgcan_add add, void *ud, int slot, bool indent, const char *text)
{
    wrap_ud w = {add, ud, slot, 0, indent};
    char *clean = sanitize_str(text, app_ctx(c->app)->san);
    text_wrap_words(clean, REASON_W, wrap_add, &w);
    free(clean);
}

void dlgcan_run_lines(const ui_canary *c, dlgcan_add add, void *ud)
{
    if (!c || !c->retry)
        return;
    char line[300];
    bout_line(&c->c, line, sizeof line);
    if (c->phase == CP_SENDING)
        add(ud, TS_DIALOG, xasprintf("canary: sending the first %zu; the rest only if at most %.0f%% fail again", c->n,
                                     c->max * 100));
    else if (c->phase == CP_WAITING) {
        add(ud, TS_DIALOG, xasprintf("canary: %zu sent: waiting up to %.0fs for their outcome in the store:",
                                     c->canary_sent, c->wait_s));
        add_wrapped(c, add, ud, TS_DIALOG, true, c->have ? line : c->why[0] ? c->why : "not read yet");
    }
    if (c->passed[0])
        add_wrapped(c, add, ud, TS_DIALOG, false, c->passed);
    if (c->reason[0]) {
        add(ud, TS_DIALOG_DANGER, xasprintf("batch %s paused:", c->id));
        add_wrapped(c, add, ud, TS_DIALOG_DANGER, true, c->reason);
        add(ud, TS_DIALOG_DANGER, xasprintf("the rest not sent: redrive batch show %s", c->id));
        add(ud, TS_DIALOG_DANGER, xasprintf("redrive batch resume %s asks again", c->id));
        return;
    }
    if (c->phase == CP_REST || c->phase == CP_FINAL) {
        add(ud, TS_DIALOG, xstrdup("outcome so far (the store):"));
        add_wrapped(c, add, ud, TS_DIALOG, true, c->have ? line : c->why[0] ? c->why : "not read yet");
        if (c->phase == CP_REST)
            breaker_line(c, add, ud);
    }
}
