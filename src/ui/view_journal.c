/* Journal: the operator's actions from the audit log (who, what, when, request, result). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "draw.h"
#include "table.h"
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

/* row->st: the indexes of the entries shown */
static void journal_row(ui_ctx *c, const ui_table_row *row)
{
    const rd_journal_entry *e = &c->journal[((const size_t *)row->st)[row->idx]];
    bool cur = row->cur;
    int base = row_base(c, row);
    if (e->malformed) {
        row_fill(row, base);
        char *t = xasprintf("(malformed line) %s", e->raw ? e->raw : "");
        int attr = cur ? base : theme_attr(c->theme, TS_WARNING);
        draw_raw(row->w, row->y, row->r.x, row->r.w, t, attr, c->san);
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
    /* a batch's lines share its id (search it with /); an override says what it overrode */
    char *msg = xasprintf("%s%.8s%s%s%s%s%s", e->batch ? "[batch " : "", e->batch ? e->batch : "", e->batch ? "] " : "",
                          e->override_ ? "[override " : "", e->override_ ? e->override_ : "",
                          e->override_ ? "] " : "", e->result ? e->result : "");
    const char *text[] = {e->time ? e->time : "-", e->operator_ ? e->operator_ : "-",
                          e->system ? e->system : "-", e->action ? e->action : "-", targets, status, NULL, msg};
    row_cells(c, row, text, base);
    row_cell(c, row, 6, e->code ? e->code : "-", cur ? base : theme_attr(c->theme, slot));
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
        {.title = "TIME", .min = 19, .want = 24},
        {.title = "OPERATOR", .min = 8, .want = 12, .weight = 1, .drop = 2},
        {.title = "SYSTEM", .min = 8, .want = 12, .weight = 1, .drop = 3},
        {.title = "ACTION", .min = 7, .want = 10},
        {.title = "TARGETS", .min = 8, .want = 16, .weight = 2},
        {.title = "HTTP", .min = 4, .want = 4, .drop = 4, .right = true},
        {.title = "RESULT", .min = 8, .want = 13},
        {.title = "MESSAGE", .min = 10, .want = 20, .weight = 3, .drop = 1},
    };
    int nc = (int)(sizeof cols / sizeof *cols);
    if (c->journal_error) {   /* the header alone: the list keeps its rows */
        table_head(c, w, r, r.y + 1, cols, nc);
        v->rows = r.h - 2 < 1 ? 1 : r.h - 2;
        v->list_y = r.y + 2;
        char *e = xasprintf("cannot read the journal: %s", c->journal_error);
        draw_raw(w, r.y + 2, r.x + 2, r.w - 2, e, theme_attr(c->theme, TS_ERROR), c->san);
        free(e);
        return;
    }
    size_t idx[4096], n = 0;
    for (size_t i = 0; i < c->n_journal && n < 4096; i++)
        if (journal_visible(&c->journal[i], c->filter[VIEW_JOURNAL].text))
            idx[n++] = i;
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = nc, .y = r.y + 1, .rows = r.h - 2, .n = (int)n, .st = idx,
        .empty = c->n_journal ? "no actions match the filter" : "no actions recorded yet",
        .row = journal_row});
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
    .panels = PANELS_KEEP,
    .open = journal_open, .draw = journal_draw, .key = journal_key, .clickable = true, .search = true,
};
