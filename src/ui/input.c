/* Keys → actions (through the keymap, with two-key sequences), the prompt line, mouse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_priv.h"
#include "batches.h"
#include "clip.h"
#include "cmd.h"
#include "dialog.h"
#include "input.h"
#include "password.h"
#include "setretry.h"

static void cmd_hist_add(ui_cmd_hist *h, const char *line)
{
    if (!line[0] || (h->n && strcmp(h->line[h->n - 1], line) == 0))
        return;
    if (h->n == CMD_HIST_MAX) {
        memmove(h->line, h->line + 1, (CMD_HIST_MAX - 1) * sizeof *h->line);
        h->n--;
    }
    snprintf(h->line[h->n++], sizeof h->line[0], "%s", line);
}

static void prompt_set(ui_prompt *p, const char *text)
{
    snprintf(p->buf, sizeof p->buf, "%s", text);
    p->len = strlen(p->buf);
    p->full = false;
}

/* Command mode's own keys: Tab completes the command name, Up/Down walk the history. */
static bool prompt_command_key(ui_app *app, ui_key k)
{
    ui_prompt *p = &app->prompt;
    const ui_cmd_hist *h = &app->cmd_hist;
    if (k == 9) {
        char out[sizeof p->buf], list[sizeof p->hint];
        size_t n = cmd_complete(p->buf, out, sizeof out, list, sizeof list);
        prompt_set(p, out);
        if (n > 1)
            snprintf(p->hint, sizeof p->hint, "%s", list);
        else
            snprintf(p->hint, sizeof p->hint, "%s", n ? "" : "no such command");
        return true;
    }
    if (k == (UK_FN | KEY_UP) && h->n) {
        p->hist_at = p->hist_at < 0 ? h->n - 1 : p->hist_at > 0 ? p->hist_at - 1 : 0;
        prompt_set(p, h->line[p->hist_at]);
        return true;
    }
    if (k == (UK_FN | KEY_DOWN) && p->hist_at >= 0) {
        p->hist_at++;
        prompt_set(p, p->hist_at < h->n ? h->line[p->hist_at] : "");
        if (p->hist_at >= h->n)
            p->hist_at = -1;
        return true;
    }
    return false;
}

static void prompt_submit(ui_app *app)
{
    ui_prompt *p = &app->prompt;
    p->active = false;
    ui_ctx *c = &app->ctx;
    if (p->full) {          /* what did not fit is lost: run nothing rather than a cut line */
        ctx_msg(c, true, "the line was longer than %zu bytes: nothing done", sizeof p->buf - 1);
        return;
    }
    switch (p->kind) {
    case PROMPT_COMMAND:
        cmd_hist_add(&app->cmd_hist, p->buf);
        app_command(app, p->buf);
        break;
    case PROMPT_SEARCH:   /* the view's own filter: no other view's rows change */
        ui_copy_text(c->filter[app->cur].text, sizeof c->filter[app->cur].text, p->buf);   /* whole characters */
        ctx_fx(c, FX_FILTER, (int)app->cur, NULL);
        break;
    case PROMPT_JUMP:
        if (p->buf[0])
            ctx_fx(c, FX_JUMP, 0, p->buf);
        break;
    case PROMPT_TYPED:   /* a resume above confirm_over: the count typed, as the dialog asks */
        batches_typed(app, p->batch, p->buf, p->want);
        break;
    default:
        break;
    }
    app_effects(app);
}

static void prompt_utf8(ui_prompt *p, ui_key k)
{
    char b[5] = {0};
    if (k < 0x80) b[0] = (char)k;
    else if (k < 0x800) { b[0] = (char)(0xc0 | (k >> 6)); b[1] = (char)(0x80 | (k & 0x3f)); }
    else if (k < 0x10000) {
        b[0] = (char)(0xe0 | (k >> 12)); b[1] = (char)(0x80 | ((k >> 6) & 0x3f)); b[2] = (char)(0x80 | (k & 0x3f));
    } else {
        b[0] = (char)(0xf0 | (k >> 18)); b[1] = (char)(0x80 | ((k >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((k >> 6) & 0x3f)); b[3] = (char)(0x80 | (k & 0x3f));
    }
    size_t n = strlen(b);
    if (p->len + n < sizeof p->buf) {
        memcpy(p->buf + p->len, b, n + 1);
        p->len += n;
    } else {
        p->full = true;
    }
}

/* As the command name is typed: the commands it starts, or the closest ones. */
static void prompt_command_hint(ui_prompt *p)
{
    const char *word = p->buf + strspn(p->buf, ": ");
    if (!*word || strpbrk(word, " \t"))
        return;
    char out[sizeof p->buf], list[sizeof p->hint];
    if (cmd_complete(p->buf, out, sizeof out, list, sizeof list)) {
        snprintf(p->hint, sizeof p->hint, "%s", list);
        return;
    }
    char err[sizeof p->hint], arg[8];
    cmd_parse(word, arg, sizeof arg, err, sizeof err);
    const char *mean = strstr(err, " (did you mean ");
    snprintf(p->hint, sizeof p->hint, "no such command%.*s", mean ? (int)(strchr(mean, ')') - mean + 1) : 0,
             mean ? mean : "");
}

static bool prompt_key(ui_app *app, ui_key k)
{
    ui_prompt *p = &app->prompt;
    if (p->kind == PROMPT_COMMAND && prompt_command_key(app, k))
        return true;
    p->hint[0] = 0;
    if (k == (UK_FN | KEY_ENTER)) {
        prompt_submit(app);
    } else if (k == 27 || k == 7) {          /* escape, ctrl-g */
        p->active = false;
    } else if (k == (UK_FN | KEY_BACKSPACE)) {
        if (!p->len) {
            p->active = false;
            return true;
        }
        do
            p->len--;
        while (p->len && ((unsigned char)p->buf[p->len] & 0xc0) == 0x80);
        p->buf[p->len] = 0;
    } else if (k == 21) {                    /* ctrl-u */
        p->len = 0;
        p->buf[0] = 0;
        p->full = false;
    } else if (k >= 0x20 && k != 0x7f && !(k & (UK_FN | UK_ALT)) && k < 0x110000) {
        prompt_utf8(p, k);
    }
    if (p->active && p->kind == PROMPT_COMMAND && k != (UK_FN | KEY_ENTER))
        prompt_command_hint(p);
    if (p->full)
        snprintf(p->hint, sizeof p->hint, "the line is full (%zu bytes): Enter does nothing, "
                 "ctrl-u clears", sizeof p->buf - 1);
    return true;
}

static void prompt_open(ui_app *app, int kind)
{
    ui_prompt *p = &app->prompt;
    memset(p, 0, sizeof *p);
    p->active = true;
    p->kind = kind;
    p->hist_at = -1;
    if (kind == PROMPT_SEARCH) {
        snprintf(p->buf, sizeof p->buf, "%s", app->ctx.filter[app->cur].text);
        p->len = strlen(p->buf);
    }
}

static bool global_action(ui_app *app, ui_action a)
{
    static const struct { ui_action a; ui_view_id v; } jumps[] = {
        {UA_VIEW_OVERVIEW, VIEW_OVERVIEW}, {UA_VIEW_EXECS, VIEW_EXECS}, {UA_VIEW_WORKERS, VIEW_WORKERS},
        {UA_VIEW_QUEUES, VIEW_QUEUES}, {UA_VIEW_DLQ, VIEW_DLQ}, {UA_VIEW_JOURNAL, VIEW_JOURNAL},
        {UA_HELP, VIEW_HELP}, {UA_VIEW_FLEET, VIEW_FLEET},
        {UA_VIEW_GROUPS, VIEW_GROUPS}, {UA_VIEW_HISTORY, VIEW_HISTORY},
        {UA_HELP, VIEW_HELP},
    };
    for (size_t i = 0; i < sizeof jumps / sizeof *jumps; i++)
        if (jumps[i].a == a) {
            app_open_view(app, jumps[i].v, NULL, true);
            return true;
        }
    switch (a) {
    case UA_QUIT:
    case UA_BACK:
        if (app->n_hist) {
            app_back(app);
        } else if (a == UA_QUIT && (!app_sys(app) || app_sys(app)->ui.confirm_quit)) {
            char yes[32] = "y";
            keymap_first(app->km, UA_CONFIRM, yes, sizeof yes);
            app->quit_ask = true;
            ctx_msg(&app->ctx, false, "quit redrive? %s: quit, any other key: stay", yes);
        } else if (a == UA_QUIT) {
            app->quit = true;
        }
        return true;
    case UA_QUIT_NOW: app->quit = true; return true;
    case UA_COMMAND: prompt_open(app, PROMPT_COMMAND); return true;
    case UA_SEARCH:
        if (app->views[app->cur].ops->search)
            prompt_open(app, PROMPT_SEARCH);
        else
            ctx_msg(&app->ctx, false, "the %s view has no rows to search", app->views[app->cur].ops->name);
        return true;
    case UA_FILTER_CLEAR: {   /* the views that do not clear their own */
        ui_filter *f = &app->ctx.filter[app->cur];
        if (filter_empty(f)) {
            ctx_msg(&app->ctx, false, "no filter in the %s view: nothing to clear", app->views[app->cur].ops->name);
            return true;
        }
        memset(f, 0, sizeof *f);
        ctx_fx(&app->ctx, FX_FILTER, (int)app->cur, NULL);
        ctx_msg(&app->ctx, false, "filter cleared");
        return true;
    }
    case UA_REDRAW: app->full_redraw = true; return true;
    case UA_TOGGLE_TIME:
        app->ctx.abs_time = !app->ctx.abs_time;
        ctx_msg(&app->ctx, false, "times: %s", app->ctx.abs_time ? (app->ctx.local_time ? "clock, local zone" : "clock, UTC") : "ages");
        return true;
    case UA_WIDE: {
        app->ctx.wide = !app->ctx.wide;
        char l[16] = "h", r[16] = "l";
        keymap_first(app->km, UA_SCROLL_LEFT, l, sizeof l);
        keymap_first(app->km, UA_SCROLL_RIGHT, r, sizeof r);
        if (app->ctx.wide)
            ctx_msg(&app->ctx, false, "wide: every column whole; %s/%s scroll sideways, W again fits them", l, r);
        else
            ctx_msg(&app->ctx, false, "columns fitted to the screen");
        return true;
    }
    case UA_SCROLL_LEFT:
    case UA_SCROLL_RIGHT:
        app->views[app->cur].h.steps += a == UA_SCROLL_RIGHT ? 1 : -1;
        return true;
    case UA_TOGGLE_TZ:
        app->ctx.local_time = !app->ctx.local_time;
        ctx_msg(&app->ctx, false, "clock times in %s", app->ctx.local_time ? "the local zone" : "UTC");
        return true;
    default: return false;
    }
}

static bool input_action(ui_app *app, ui_action a)
{
    ui_ctx *c = &app->ctx;
    c->msg[0] = 0;
    if (dialog_modal(app)) {
        dialog_key(app, a);
        app_effects(app);   /* a view it opened (the drain cockpit) may have asked for data */
        return true;
    }
    const ui_action_info *info = actlist_info(a);
    if ((info->flags & UA_DANGER) && c->read_only) {
        ctx_msg(c, true, "read-only: '%s' is disabled", info->name);
        return true;
    }
    ui_view *v = &app->views[app->cur];
    bool is_view_switch = a >= UA_VIEW_OVERVIEW && a <= UA_VIEW_HISTORY;
    bool is_wide = a == UA_WIDE || a == UA_SCROLL_LEFT || a == UA_SCROLL_RIGHT;
    unsigned ch = UI_CH_UNHANDLED;
    if (!is_view_switch && !is_wide && a != UA_HELP && a != UA_COMMAND && a != UA_SEARCH)
        ch = v->ops->key ? v->ops->key(v, c, a) : UI_CH_UNHANDLED;
    if (ch & UI_CH_UNHANDLED) {
        if (!global_action(app, a)) {
            ctx_msg(c, false, "'%s' does nothing in this view", info->name);
        }
    }
    if (ch & UI_CH_QUIT)
        app->quit = true;
    if (ch & UI_CH_BACK)
        app_back(app);
    app_effects(app);
    return true;
}

static bool input_key1(ui_app *app, ui_key k);

/* A key; quitting waits for a batch put away that still runs (it is shown again). */
bool input_key(ui_app *app, ui_key k)
{
    bool r = input_key1(app, k);
    if (app->quit && dialog_in_background(app, "quit")) {
        app->quit = false;
        app->dlg.hidden = false;
    }
    if (app->quit && !app->quit_batches && runs_running(app_runs(app))) {
        /* batches sending: quitting asks, and says what becomes of them */
        char yes[32] = "y", what[300];
        keymap_first(app->km, UA_CONFIRM, yes, sizeof yes);
        batches_running_text(app, what, sizeof what);
        app->quit = false;
        app->quit_ask = app->quit_batches = true;
        ctx_msg(&app->ctx, true, "quit? %s: it stops sending and stays open, resumable (:batches). "
                "%s: quit, other: stay", what, yes);
    }
    return r;
}

static bool input_key1(ui_app *app, ui_key k)
{
    if (k == (UK_FN | KEY_RESIZE)) {
        app_resized(app);
        return true;
    }
    if (k == (UK_FN | KEY_MOUSE)) {
        input_mouse(app);
        return true;
    }
    if (app->pw.active) {   /* raw keys: a password never meets the keymap */
        password_key(app, k);
        return true;
    }
    if (app->prompt.active)
        return prompt_key(app, k);
    if (app->clip) {   /* the copy overlay: any key closes it */
        clip_close(app);
        return true;
    }
    if (app->quit_ask) {   /* "quit redrive?": the confirm key quits, any other stays */
        ui_action a = UA_NONE;
        app->quit_ask = false;
        if (keymap_match(app->km, &k, 1, UA_DIALOG, &a) == KM_ACTION && a == UA_CONFIRM)
            app->quit = true;
        else {
            app->quit_batches = false;   /* asked again next time */
            ctx_msg(&app->ctx, false, "not quitting");
        }
        return true;
    }
    if (app->dlg.state == DLG_TYPE) {   /* the typed count: raw keys, never the keymap */
        app->ctx.msg[0] = 0;
        dialog_type_key(app, k);
        return true;
    }
    if (dialog_modal(app) && setretry_raw_key(app, k))   /* the canary's size (c, digits) */
        return true;
    bool in_dlg = dialog_modal(app);
    ui_view *view = &app->views[app->cur];
    if (!in_dlg && !app->n_pending && view->ops->raw_key) {
        ui_action nav = UA_NONE;
        bool is_nav = keymap_match(app->km, &k, 1, 0, &nav) == KM_ACTION && dialog_nav(nav);
        if (view->ops->raw_key(view, &app->ctx, k, is_nav))
            return true;
    }
    app->pending[app->n_pending++] = k;
    ui_action a = UA_NONE;
    /* wide mode over a table: its scroll keys before the view's (h/l, left/right) */
    if (!in_dlg && app->ctx.wide && view->h.table &&
        keymap_match(app->km, app->pending, app->n_pending, UA_HSCROLL, &a) == KM_ACTION) {
        app->n_pending = 0;
        return input_action(app, a);
    }
    km_match m = keymap_match(app->km, app->pending, app->n_pending, in_dlg ? UA_DIALOG : 0, &a);
    if (m == KM_NONE && in_dlg) {   /* a dialog also takes the movement keys (result rows) */
        ui_action nav = UA_NONE;
        if (keymap_match(app->km, app->pending, app->n_pending, 0, &nav) == KM_ACTION && dialog_nav(nav)) {
            m = KM_ACTION;
            a = nav;
        }
    }
    if (m == KM_PREFIX && app->n_pending < KM_SEQ_MAX)
        return true;
    int n = app->n_pending;
    app->n_pending = 0;
    if (m != KM_ACTION) {
        char name[32];
        key_text(k, false, name, sizeof name);
        if (!in_dlg)
            ctx_msg(&app->ctx, false, "%s%s is not bound (? for help)", n > 1 ? "that sequence ending in " : "", name);
        return true;
    }
    return input_action(app, a);
}

void input_mouse(ui_app *app)
{
    MEVENT ev;
    if (getmouse(&ev) != OK || dialog_modal(app) || app->prompt.active || app->pw.active)
        return;
    ui_view *v = &app->views[app->cur];
    if (ev.bstate & BUTTON4_PRESSED) {
        for (int i = 0; i < 3; i++)
            input_action(app, UA_UP);
        return;
    }
#ifdef BUTTON5_PRESSED
    if (ev.bstate & BUTTON5_PRESSED) {
        for (int i = 0; i < 3; i++)
            input_action(app, UA_DOWN);
        return;
    }
#endif
    if ((ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_DOUBLE_CLICKED)) &&
        v->ops->clickable &&
        ev.y >= v->list_y && ev.y < v->list_y + v->rows) {
        if (v->ops->select)
            v->ops->select(v, &app->ctx, ev.y - v->list_y);
        else
            view_select(v, &app->ctx, ev.y - v->list_y);
        if (ev.bstate & BUTTON1_DOUBLE_CLICKED)
            input_action(app, UA_OPEN);
    }
}
