/* One execution in full: the whole error and its backtrace, the parameters and the result
 * as pretty-printed JSON, every timestamp, the worker and the chain position
 * (core/detail.h), scrollable. Read from the store once when the pane opens (and on
 * refresh), never on a poll. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/detail.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "draw.h"
#include "view.h"

typedef struct detail_st {
    char id[256];           /* the execution shown */
    const char *text_of;    /* the model's record the text was made from */
    char *text;             /* sanitized, multi-line */
    int scroll, lines;      /* first line shown; lines at the last draw */
} detail_st;

static const ui_action detail_bar[] = {UA_COPY, UA_REFRESH, UA_BACK, UA_HELP, UA_QUIT, UA_NONE};

static detail_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(detail_st));
    return v->st;
}

static bool detail_ready(const detail_st *s, const ui_ctx *c)
{
    return c->model->detail_id && strcmp(c->model->detail_id, s->id) == 0;
}

static void detail_open(ui_view *v, ui_ctx *c, const char *arg)
{
    detail_st *s = st_of(v);
    if (arg && *arg && strcmp(arg, s->id) != 0) {
        snprintf(s->id, sizeof s->id, "%s", arg);
        s->scroll = 0;
    }
    if (s->id[0])
        ctx_fx(c, FX_DETAIL, 0, s->id);
}

/* The one-line title above the text: the id and what part of the text shows. */
static void detail_title(const detail_st *s, ui_ctx *c, WINDOW *w, ui_rect r, int rows)
{
    char *t = xasprintf("Execution %s  lines %d-%d of %d", s->id, s->lines ? s->scroll + 1 : 0,
                        s->scroll + rows < s->lines ? s->scroll + rows : s->lines, s->lines);
    draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE), c->san);
    free(t);
}

static void detail_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    detail_st *s = st_of(v);
    const rd_model *m = c->model;
    v->rows = r.h - 1 < 1 ? 1 : r.h - 1;
    if (!s->id[0]) {
        draw_clean(w, r.y, r.x, r.w, "Execution detail: press d on an execution, Enter on a chain attempt, or :detail ID",
                   theme_attr(c->theme, TS_DIM));
        return;
    }
    if (!detail_ready(s, c)) {
        char *t = xasprintf("Execution %s: loading...", s->id);
        draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_DIM), c->san);
        free(t);
        return;
    }
    if (!m->detail) {
        char *t = xasprintf("Execution %s: %s", s->id, m->detail_why ? m->detail_why : "no record");
        draw_raw(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_WARNING), c->san);
        free(t);
        return;
    }
    if (s->text_of != m->detail || !s->text) {
        free(s->text);
        s->text = detail_text(m->detail, c->san);
        s->text_of = m->detail;
    }
    ui_lines p = {w, r.y + 1, r.x, r.w, s->scroll, v->rows, 0, 0};
    text_wrap(s->text, r.w, draw_lines_cb, &p);
    s->lines = p.count;
    if (s->scroll > s->lines - v->rows && s->lines > v->rows) {   /* narrower now: clamp */
        s->scroll = s->lines - v->rows;
    }
    detail_title(s, c, w, r, v->rows);
}

static unsigned detail_scroll(detail_st *s, int rows, ui_action a)
{
    int max = s->lines - rows < 0 ? 0 : s->lines - rows;
    switch (a) {
    case UA_UP: s->scroll--; break;
    case UA_DOWN: s->scroll++; break;
    case UA_PAGE_UP: s->scroll -= rows; break;
    case UA_PAGE_DOWN: s->scroll += rows; break;
    case UA_TOP: s->scroll = 0; break;
    case UA_BOTTOM: s->scroll = max; break;
    default: return UI_CH_UNHANDLED;
    }
    s->scroll = s->scroll > max ? max : s->scroll < 0 ? 0 : s->scroll;
    return UI_CH_REDRAW;
}

static unsigned detail_key(ui_view *v, ui_ctx *c, ui_action a)
{
    detail_st *s = st_of(v);
    unsigned ch = detail_scroll(s, v->rows, a);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    if (a == UA_REFRESH) {
        detail_open(v, c, NULL);
        return UI_CH_REDRAW;
    }
    if (a != UA_COPY)
        return UI_CH_UNHANDLED;
    char *payload = detail_ready(s, c) ? detail_payload(c->model->detail) : NULL;
    sel_clear(&c->sel);
    if (payload)
        sel_add(&c->sel, payload, NULL, "payload", NULL);
    free(payload);
    ctx_fx(c, FX_COPY, 0, NULL);
    return UI_CH_REDRAW;
}

static void detail_free(ui_view *v)
{
    detail_st *s = v->st;
    if (s)
        free(s->text);
    free(s);
    v->st = NULL;
}

const ui_view_ops view_detail_ops = {
    .name = "detail", .title = "Execution", .bar = detail_bar,
    .panels = PANELS_NONE, .snapshot = "execution",
    .open = detail_open, .draw = detail_draw, .key = detail_key, .free = detail_free,
};
