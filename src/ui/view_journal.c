/* Journal: the operator's actions from the audit log (who, what, when, request, result). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "view.h"

static const ui_action journal_bar[] = {UA_REFRESH, UA_SEARCH, UA_BACK, UA_HELP, UA_QUIT, UA_NONE};

static void journal_open(ui_view *v, ui_ctx *c, const char *arg)
{
    ctx_fx(c, FX_JOURNAL, 0, NULL);
    v->list.cur = 1 << 30;   /* newest (last) entry */
    (void)arg;
}

static void journal_targets(const rd_journal_entry *e, char *out, size_t cap)
{
    out[0] = 0;
    for (size_t i = 0; i < e->n_targets; i++) {
        size_t l = strlen(out);
        if (l + 4 >= cap)
            break;
        snprintf(out + l, cap - l, "%s%s", i ? "," : "", e->targets[i] ? e->targets[i] : "");
    }
}

static void journal_row(const rd_journal_entry *e, ui_ctx *c, WINDOW *w, int y, ui_rect r, const ui_col *cols,
                        bool cur)
{
    int base = cur ? theme_attr(c->theme, TS_CURSOR) : 0;
    draw_fill(w, y, r.x, r.w, base);
    if (e->malformed) {
        char *t = xasprintf("(malformed line) %s", e->raw ? e->raw : "");
        draw_raw(w, y, r.x, r.w, t, cur ? base : theme_attr(c->theme, TS_WARNING), c->san);
        free(t);
        return;
    }
    char targets[512], status[24];
    journal_targets(e, targets, sizeof targets);
    if (e->http_status > 0)
        snprintf(status, sizeof status, "%ld", e->http_status);
    else
        snprintf(status, sizeof status, "-");
    /* one row per action, in its latest state: "pending" (sent, no outcome recorded) and
     * "unknown" (redrive stopped while it was in flight) may have been applied */
    bool ok = e->code && strcmp(e->code, "ok") == 0;
    bool open = e->code && (strcmp(e->code, "pending") == 0 || strcmp(e->code, "unknown") == 0);
    ui_slot slot = ok ? TS_OK : open ? TS_WARNING : TS_FAILED;
    cols_cell(w, y, r.x, &cols[0], e->time ? e->time : "-", base, c->san);
    cols_cell(w, y, r.x, &cols[1], e->operator_ ? e->operator_ : "-", base, c->san);
    cols_cell(w, y, r.x, &cols[2], e->system ? e->system : "-", base, c->san);
    cols_cell(w, y, r.x, &cols[3], e->action ? e->action : "-", base, c->san);
    cols_cell(w, y, r.x, &cols[4], targets, base, c->san);
    cols_cell(w, y, r.x, &cols[5], status, base, c->san);
    cols_cell(w, y, r.x, &cols[6], e->code ? e->code : "-", cur ? base : theme_attr(c->theme, slot),
              c->san);
    /* a batch's lines share its id (search it with /); an override says what it overrode */
    char *msg = xasprintf("%s%.8s%s%s%s%s%s", e->batch ? "[batch " : "", e->batch ? e->batch : "", e->batch ? "] " : "",
                          e->override_ ? "[override " : "", e->override_ ? e->override_ : "",
                          e->override_ ? "] " : "", e->result ? e->result : "");
    cols_cell(w, y, r.x, &cols[7], msg, base, c->san);
    free(msg);
}

static bool journal_visible(const rd_journal_entry *e, const char *text)
{
    return ui_match(e->raw, text) || ui_match(e->action, text) || ui_match(e->operator_, text);
}

static void journal_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    char t[160];
    int tn = snprintf(t, sizeof t, "Journal  %zu action%s recorded (newest last)", c->n_journal,
                      c->n_journal == 1 ? "" : "s");
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE));
    filter_title(c, w, r, tn, &c->filter[VIEW_JOURNAL]);
    ui_col cols[] = {
        {"TIME", 19, 24, 0, 0, false, 0, 0},  {"OPERATOR", 8, 12, 1, 2, false, 0, 0},
        {"SYSTEM", 8, 12, 1, 3, false, 0, 0}, {"ACTION", 7, 10, 0, 0, false, 0, 0},
        {"TARGETS", 8, 16, 2, 0, false, 0, 0}, {"HTTP", 4, 4, 0, 4, true, 0, 0},
        {"RESULT", 8, 13, 0, 0, false, 0, 0}, {"MESSAGE", 10, 20, 3, 1, false, 0, 0},
    };
    int nc = (int)(sizeof cols / sizeof *cols);
    cols_layout(cols, nc, r.w);
    cols_header(w, r.y + 1, r.x, cols, nc, theme_attr(c->theme, TS_HEADER));
    v->rows = r.h - 2 < 1 ? 1 : r.h - 2;
    v->list_y = r.y + 2;
    if (c->journal_error) {
        char *e = xasprintf("cannot read the journal: %s", c->journal_error);
        draw_raw(w, r.y + 2, r.x + 2, r.w - 2, e, theme_attr(c->theme, TS_ERROR), c->san);
        free(e);
        return;
    }
    size_t idx[4096], n = 0;
    for (size_t i = 0; i < c->n_journal && n < 4096; i++)
        if (journal_visible(&c->journal[i], c->filter[VIEW_JOURNAL].text))
            idx[n++] = i;
    v->list.n = (int)n;
    list_fit(&v->list, v->rows);
    if (!n)
        draw_clean(w, r.y + 2, r.x + 2, r.w - 2, c->n_journal ? "no actions match the filter" : "no actions recorded yet",
                   theme_attr(c->theme, TS_DIM));
    for (int i = 0; i < v->rows && v->list.top + i < v->list.n; i++) {
        int k = v->list.top + i;
        journal_row(&c->journal[idx[k]], c, w, r.y + 2 + i, r, cols, k == v->list.cur);
    }
}

static unsigned journal_key(ui_view *v, ui_ctx *c, ui_action a)
{
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED))
        return ch;
    if (a == UA_REFRESH) {
        ctx_fx(c, FX_JOURNAL, 0, NULL);
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

const ui_view_ops view_journal_ops = {
    .name = "journal", .title = "Journal", .bar = journal_bar,
    .open = journal_open, .draw = journal_draw, .key = journal_key, .clickable = true, .search = true,
};
