/* Helpers shared by every view: the effect outbox, the frozen selection, list movement. */
#include "view.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/textutil.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "draw.h"

void ctx_fx(ui_ctx *c, fx_kind k, int arg, const char *text)
{
    /* A view asks for at most a few effects per key; a fifth is a bug, not data to drop. */
    assert(c->n_fx < (int)(sizeof c->fx / sizeof *c->fx));
    ui_effect *e = &c->fx[c->n_fx++];
    e->kind = k;
    e->arg = arg;
    snprintf(e->text, sizeof e->text, "%s", text ? text : "");
}

void ctx_msg(ui_ctx *c, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->msg_error = error;
}

void sel_clear(ui_sel *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->ids[i]);
        free(s->parents[i]);
        free(s->labels[i]);
        free(s->fps[i]);
        free(s->whys[i]);
    }
    free(s->ids);
    free(s->parents);
    free(s->labels);
    free(s->fps);
    free(s->whys);
    free(s->attempts);
    free(s->loops);
    free(s->elig);
    free(s->notes);
    memset(s, 0, sizeof *s);
}

/* Every per-item array grows together. */
static void sel_grow(ui_sel *s)
{
    if (s->n < s->cap)
        return;
    void **arrays[] = {(void **)&s->ids, (void **)&s->parents, (void **)&s->labels, (void **)&s->fps,
                       (void **)&s->whys};
    size_t cap = s->cap;
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) {
        cap = s->cap;
        xgrow(arrays[k], &cap, s->n + 1, sizeof(char *));
    }
    int **ints[] = {&s->attempts, &s->loops, &s->elig};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
        cap = s->cap;
        xgrow(ints[k], &cap, s->n + 1, sizeof(int));
    }
    s->cap = cap;
}

void sel_add(ui_sel *s, const char *id, const char *parent, const char *label, const char *fp)
{
    sel_grow(s);
    s->ids[s->n] = xstrdup(id ? id : "");
    s->parents[s->n] = xstrdup(parent);
    s->labels[s->n] = xstrdup(label);
    s->fps[s->n] = xstrdup(fp ? fp : "");
    s->whys[s->n] = NULL;
    s->attempts[s->n] = 0;
    s->loops[s->n] = 0;
    s->elig[s->n] = RD_ELIG_UNKNOWN;
    s->n++;
}

void sel_set_elig(ui_sel *s, size_t i, rd_elig elig, const char *why)
{
    free(s->whys[i]);
    s->whys[i] = why && *why ? xstrdup(why) : NULL;
    s->elig[i] = (int)elig;
}

void sel_add_from(ui_sel *dst, const ui_sel *src, size_t i)
{
    sel_add(dst, src->ids[i], src->parents[i], src->labels[i], src->fps[i]);
    dst->attempts[dst->n - 1] = src->attempts[i];
    dst->loops[dst->n - 1] = src->loops[i];
    sel_set_elig(dst, dst->n - 1, (rd_elig)src->elig[i], src->whys[i]);
}

void sel_remove(ui_sel *s, size_t i)
{
    free(s->ids[i]);
    free(s->parents[i]);
    free(s->labels[i]);
    free(s->fps[i]);
    free(s->whys[i]);
    for (size_t j = i + 1; j < s->n; j++) {
        s->ids[j - 1] = s->ids[j];
        s->parents[j - 1] = s->parents[j];
        s->labels[j - 1] = s->labels[j];
        s->fps[j - 1] = s->fps[j];
        s->whys[j - 1] = s->whys[j];
        s->attempts[j - 1] = s->attempts[j];
        s->loops[j - 1] = s->loops[j];
        s->elig[j - 1] = s->elig[j];
    }
    s->n--;
}

rd_guard_item sel_guard_item(const ui_sel *s, size_t i)
{
    return (rd_guard_item){s->ids[i], (rd_elig)s->elig[i], s->whys[i], s->loops[i]};
}

int ctx_loop(const ui_ctx *c, const rd_execution *e)
{
    return loop_count(e, c->retries, c->n_retries);
}

void sel_add_exec(ui_sel *s, const ui_ctx *c, const rd_execution *e)
{
    sel_add_exec_as(s, c, e, e->id);
}

void sel_add_exec_as(ui_sel *s, const ui_ctx *c, const rd_execution *e, const char *id)
{
    sel_add(s, id, e->parent_id, e->name, e->fingerprint);
    s->attempts[s->n - 1] = e->attempt;
    s->loops[s->n - 1] = ctx_loop(c, e);
    sel_set_elig(s, s->n - 1, e->elig.verdict, e->elig.why);
}

void sel_note(ui_sel *s, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *old = s->notes;
    s->notes = xasprintf("%s%s%s", old ? old : "", old ? "\n" : "", line);
    free(old);
}

/* A clock time: "14:03:05" within a day of now, else "05-01 14:03"; UTC or local. */
static void clock_text(bool local, double now, double t, char *out, size_t cap)
{
    double d = now - t;
    struct tm tm;
    text_tm(t, local, &tm);
    strftime(out, cap, d < 86400 && d > -86400 ? "%H:%M:%S" : "%m-%d %H:%M", &tm);
}

static void age_text(const ui_ctx *c, ui_age_kind kind, double now, double t, double fresh_s,
                     char *out, size_t cap)
{
    if (c->abs_time && t > 0 && kind != AGE_FRESH) {
        clock_text(c->local_time, now, t, out, cap);
        return;
    }
    switch (kind) {
    case AGE_AGO:
        fmt_age(now, t, out, cap);
        break;
    case AGE_ETA:
        if (t <= 0)
            snprintf(out, cap, "-");
        else if (t <= now)
            snprintf(out, cap, "due");
        else {
            char a[16];
            fmt_age(now, now - (t - now), a, sizeof a);
            snprintf(out, cap, "in %s", a);
        }
        break;
    case AGE_FRESH:       /* the same rule as source_is_fresh (model.h) */
        if (t > 0 && now - t < fresh_s && now - t > -5)
            snprintf(out, cap, "%s", "");
        else if (c->abs_time && t > 0)
            clock_text(c->local_time, now, t, out, cap);
        else
            fmt_age(now, t, out, cap);
        break;
    }
}

static void age_record(ui_ctx *c, ui_age_kind kind, double t, double fresh_s, const char *text)
{
    if (c->n_ages >= UI_AGES_MAX) {
        c->ages_overflow = true;
        return;
    }
    ui_age *a = &c->ages[c->n_ages++];
    a->kind = kind;
    a->t = t;
    a->fresh_s = fresh_s;
    a->src = -1;
    snprintf(a->text, sizeof a->text, "%s", text);
}

void ctx_age(ui_ctx *c, double t, char *out, size_t cap)
{
    age_text(c, AGE_AGO, c->now, t, c->fresh_s, out, cap);
    age_record(c, AGE_AGO, t, c->fresh_s, out);
}

void ctx_eta(ui_ctx *c, double t, char *out, size_t cap)
{
    age_text(c, AGE_ETA, c->now, t, c->fresh_s, out, cap);
    age_record(c, AGE_ETA, t, c->fresh_s, out);
}

bool ctx_fresh(ui_ctx *c, double t, char *out, size_t cap)
{
    age_text(c, AGE_FRESH, c->now, t, c->fresh_s, out, cap);
    age_record(c, AGE_FRESH, t, c->fresh_s, out);
    return !out[0];
}

bool ctx_source_fresh(ui_ctx *c, const rd_source_status *s, char *out, size_t cap)
{
    double fresh = source_fresh_s(s, c->poll_s);
    age_text(c, AGE_FRESH, c->now, s->last_ok, fresh, out, cap);
    age_record(c, AGE_FRESH, s->last_ok, fresh, out);
    const rd_source_status *first = c->model ? c->model->sources.items : NULL;
    if (first && !c->ages_overflow && s >= first && s < first + c->model->sources.n)
        c->ages[c->n_ages - 1].src = (int)(s - first);
    return !out[0];
}

/* The time an age is judged from: a source's freshness by its newest answer (a steady
 * poll that moved nothing else keeps "ok" on screen without a repaint), else as painted. */
static double age_t(const ui_ctx *c, const ui_age *a)
{
    if (a->src >= 0 && c->model && (size_t)a->src < c->model->sources.n)
        return c->model->sources.items[a->src].last_ok;
    return a->t;
}

void ctx_time(const ui_ctx *c, double t, char *out, size_t cap)
{
    if (t <= 0) {
        snprintf(out, cap, "-");
        return;
    }
    struct tm tm;
    text_tm(t, c->local_time, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

bool ctx_ages_changed(const ui_ctx *c, double now)
{
    if (c->ages_overflow)
        return true;
    for (int i = 0; i < c->n_ages; i++) {
        const ui_age *a = &c->ages[i];
        char text[sizeof a->text];
        age_text(c, a->kind, now, age_t(c, a), a->fresh_s, text, sizeof text);
        if (strcmp(text, a->text) != 0)
            return true;
    }
    return false;
}

void view_select(ui_view *v, ui_ctx *c, int row)
{
    v->list.cur = v->list.top + row;
    list_fit(&v->list, v->rows);
    if (v->ops->row_id)
        list_pin(&v->list, c, v->ops->row_id, v->st);
}

/* An age only moves forward ("12s", "13s", ... "2m"; "" then "5s" once stale; "in 3s",
 * "due"): once one reads differently it stays so. Doubling steps find a time by which one
 * has changed, halving ones bring it within ~0.1 s of the change. */
double ctx_ages_next_change(const ui_ctx *c, double now, double min_s, double max_s)
{
    if (c->ages_overflow || ctx_ages_changed(c, now + min_s))
        return min_s;
    double lo = min_s, hi = min_s * 2;
    while (hi < max_s && !ctx_ages_changed(c, now + hi))
        lo = hi, hi *= 2;
    if (hi >= max_s) {
        if (!ctx_ages_changed(c, now + max_s))
            return max_s;
        hi = max_s;
    }
    while (hi - lo > 0.1) {
        double mid = (lo + hi) / 2;
        if (ctx_ages_changed(c, now + mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* The cursor on a row, the top neither below it nor negative; with rows > 0 (the height)
 * also the cursor on screen and no blank rows under the last one. */
static void list_clamp(ui_list *l, int rows)
{
    if (l->cur >= l->n)
        l->cur = l->n - 1;
    if (l->cur < 0)
        l->cur = 0;
    if (l->top > l->cur)
        l->top = l->cur;
    if (rows > 0 && l->cur >= l->top + rows)
        l->top = l->cur - rows + 1;
    if (rows > 0 && l->top > l->n - rows)
        l->top = l->n - rows;
    if (l->top < 0)
        l->top = 0;
}

void list_fit(ui_list *l, int rows)
{
    if (rows < 1)   /* height not known yet (no draw so far): clamp only */
        rows = l->n > 0 ? l->n : 1;
    list_clamp(l, rows);
}

unsigned list_key(ui_list *l, ui_ctx *c, ui_action a, int page)
{
    unsigned ch = list_nav(l, a, page);
    if (!(ch & UI_CH_UNHANDLED) || a != UA_REFRESH)
        return ch;
    ctx_fx(c, FX_REFRESH, 0, NULL);
    return UI_CH_REDRAW;
}

unsigned list_nav(ui_list *l, ui_action a, int page)
{
    if (page < 1)
        page = 1;
    switch (a) {
    case UA_UP: l->cur--; break;
    case UA_DOWN: l->cur++; break;
    case UA_PAGE_UP: l->cur -= page; l->top -= page; break;
    case UA_PAGE_DOWN: l->cur += page; l->top += page; break;
    case UA_TOP: l->cur = 0; break;
    case UA_BOTTOM: l->cur = l->n - 1; break;
    default: return UI_CH_UNHANDLED;
    }
    /* clamp only: the next draw scrolls so the cursor is visible (it knows the height) */
    list_clamp(l, 0);
    return UI_CH_REDRAW;
}

bool ui_match(const char *hay, const char *needle)
{
    if (!needle || !*needle)
        return true;
    if (!hay)
        return false;
    size_t nl = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < nl && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == nl)
            return true;
    }
    return false;
}

void list_pin(ui_list *l, const ui_ctx *c, ui_row_id id_of, const void *st)
{
    const char *id = l->n > 0 && l->cur >= 0 && l->cur < l->n ? id_of(c, st, l->cur) : NULL;
    /* an id too long to keep whole is not followed: a prefix could name another row */
    if (!id || strlen(id) >= sizeof l->follow)
        l->follow[0] = 0;
    else
        memcpy(l->follow, id, strlen(id) + 1);
}

void list_unpin(ui_list *l)
{
    l->follow[0] = 0;
}

bool list_follow(ui_list *l, ui_ctx *c, const char *what, ui_row_id id_of, const void *st)
{
    bool kept = true;
    if (l->follow[0]) {
        int at = -1;
        for (int i = 0; i < l->n && at < 0; i++) {
            const char *id = id_of(c, st, i);
            if (id && strcmp(id, l->follow) == 0)
                at = i;
        }
        if (at >= 0) {
            l->cur = at;
        } else {
            ctx_msg(c, false, "%s %s left the view", what, l->follow);
            kept = false;
        }
    }
    if (l->cur >= l->n)
        l->cur = l->n - 1;
    if (l->cur < 0)
        l->cur = 0;
    list_pin(l, c, id_of, st);
    return kept;
}

void ui_copy_text(char *dst, size_t cap, const char *src)
{
    if (!cap)
        return;
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) {
        n = cap - 1;
        /* src[n] is the first byte left out: when it continues a character, cut before
         * that character's lead byte */
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    if (n)
        memcpy(dst, src, n);
    dst[n] = 0;
}

bool filter_empty(const ui_filter *f)
{
    return !f->status[0] && !f->text[0] && !f->fp[0] && !f->worker[0];
}

int filter_title(ui_ctx *c, WINDOW *w, ui_rect r, int used, const ui_filter *f)
{
    if (filter_empty(f) || used >= r.w)
        return used;
    char *ft = xasprintf("  filter:%s%s%s%s%s%s%s%s", f->status[0] ? " status=" : "", f->status,
                         f->text[0] ? " text=" : "", f->text, f->worker[0] ? " worker=" : "", f->worker,
                         f->fp[0] ? " error~" : "", f->fp);
    char *clean = sanitize_str(ft, c->san);
    int width = sanitize_width(clean);
    draw_clean(w, r.y, r.x + used, r.w - used, clean, theme_attr(c->theme, TS_WARNING));
    free(clean);
    free(ft);
    return used + width;
}
