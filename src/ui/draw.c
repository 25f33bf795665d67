#include "draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../core/health.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"

enum { FIT_CAP = 2048 };

/* n blanks in attr from the cursor on, in one call (a blank per waddch was most of the
 * cost of painting a list); the cursor does not move. */
static void blanks(WINDOW *w, int n, int attr)
{
    if (n > 0)
        whline(w, (chtype)' ' | (chtype)attr, n);
}

int draw_clean(WINDOW *w, int y, int x, int cols, const char *clean, int attr)
{
    if (cols <= 0)
        return 0;
    char buf[FIT_CAP];
    int used = sanitize_fit(clean ? clean : "", cols, buf, sizeof buf, 0);
    wattrset(w, attr);
    mvwaddstr(w, y, x, buf);
    blanks(w, cols - used, attr);
    wattrset(w, 0);
    return cols;
}

int draw_raw(WINDOW *w, int y, int x, int cols, const char *raw, int attr, unsigned san)
{
    if (cols <= 0)
        return 0;
    char *clean = sanitize_str(raw, san);
    char buf[FIT_CAP];
    int used = sanitize_fit(clean, cols, buf, sizeof buf, san);
    free(clean);
    wattrset(w, attr);
    mvwaddstr(w, y, x, buf);
    blanks(w, cols - used, attr);
    wattrset(w, 0);
    return cols;
}

void draw_fill(WINDOW *w, int y, int x, int cols, int attr)
{
    wmove(w, y, x);
    blanks(w, cols, attr);
}

void draw_recolor(WINDOW *w, int y, int x, int cols, int attr)
{
    if (cols > 0)
        mvwchgat(w, y, x, cols, (attr_t)attr & ~(attr_t)A_COLOR, (short)PAIR_NUMBER(attr), NULL);
}

void draw_panel(WINDOW *w, ui_rect b, int attr)
{
    for (int y = 0; y < b.h; y++)
        draw_fill(w, b.y + y, b.x, b.w, attr);
}

void draw_box(WINDOW *w, ui_rect b, int attr)
{
    draw_panel(w, b, attr);
    int bottom = b.y + b.h - 1, right = b.x + b.w - 1;
    wattrset(w, attr);
    mvwhline(w, b.y, b.x, ACS_HLINE, b.w);
    mvwhline(w, bottom, b.x, ACS_HLINE, b.w);
    mvwvline(w, b.y, b.x, ACS_VLINE, b.h);
    mvwvline(w, b.y, right, ACS_VLINE, b.h);
    mvwaddch(w, b.y, b.x, ACS_ULCORNER);
    mvwaddch(w, b.y, right, ACS_URCORNER);
    mvwaddch(w, bottom, b.x, ACS_LLCORNER);
    mvwaddch(w, bottom, right, ACS_LRCORNER);
    wattrset(w, 0);
}

static int cols_need(const ui_col *c, int n)
{
    int need = 0, shown = 0;
    for (int i = 0; i < n; i++)
        if (c[i].w >= 0) {
            need += c[i].min + (shown ? 1 : 0);
            shown++;
        }
    return need;
}

void cols_layout(ui_col *c, int n, int width)
{
    for (int i = 0; i < n; i++)
        c[i].w = 0;
    /* hide droppable columns (highest drop first) until the minimums fit */
    while (cols_need(c, n) > width) {
        int worst = -1;
        for (int i = 0; i < n; i++)
            if (c[i].w >= 0 && c[i].drop > 0 && (worst < 0 || c[i].drop > c[worst].drop))
                worst = i;
        if (worst < 0)
            break;
        c[worst].w = -1;
    }
    int total = cols_need(c, n), weights = 0;
    for (int i = 0; i < n; i++)
        if (c[i].w >= 0) {
            c[i].w = c[i].min;
            weights += c[i].weight;
        }
    for (int i = 0; i < n && total < width; i++) {
        if (c[i].w < 0 || c[i].want <= c[i].w)
            continue;
        int add = c[i].want - c[i].w;
        if (add > width - total)
            add = width - total;
        c[i].w += add;
        total += add;
    }
    int spare = width - total, given = 0, last = -1;
    for (int i = 0; i < n && spare > 0 && weights > 0; i++) {
        if (c[i].w < 0 || !c[i].weight)
            continue;
        int add = spare * c[i].weight / weights;
        c[i].w += add;
        given += add;
        last = i;
    }
    if (last >= 0 && spare > given)
        c[last].w += spare - given;
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].w < 0) {
            c[i].w = 0;
            continue;
        }
        c[i].x = x;
        x += c[i].w + 1;
    }
}

void cols_header(WINDOW *w, int y, int x, const ui_col *c, int n, int attr)
{
    int end = x;
    for (int i = 0; i < n; i++) {
        if (!c[i].w)
            continue;
        char buf[128];
        if (c[i].right)
            snprintf(buf, sizeof buf, "%*s", c[i].w, c[i].title);
        else
            snprintf(buf, sizeof buf, "%s", c[i].title);
        draw_clean(w, y, x + c[i].x, c[i].w, buf, attr);
        if (x + c[i].x + c[i].w < getmaxx(w))
            draw_fill(w, y, x + c[i].x + c[i].w, 1, attr);
        end = x + c[i].x + c[i].w + 1;
    }
    if (end < getmaxx(w))
        draw_fill(w, y, end, getmaxx(w) - end, attr);
}

static void cell_mid(WINDOW *w, int y, int x, const ui_col *c, const char *raw, int attr, unsigned san)
{
    char *clean = sanitize_str(raw, san);
    char buf[FIT_CAP];
    int used = sanitize_fit_mid(clean, c->w, buf, sizeof buf, san);
    free(clean);
    wattrset(w, attr);
    mvwaddstr(w, y, x + c->x, buf);
    blanks(w, c->w - used, attr);
    wattrset(w, 0);
}

void cols_cell(WINDOW *w, int y, int x, const ui_col *c, const char *raw, int attr, unsigned san)
{
    if (!c->w)
        return;
    if (c->mid) {
        cell_mid(w, y, x, c, raw, attr, san);
        return;
    }
    if (!c->right) {
        draw_raw(w, y, x + c->x, c->w, raw, attr, san);
        return;
    }
    char *clean = sanitize_str(raw, san);
    int width = sanitize_width(clean);
    int pad = width < c->w ? c->w - width : 0;
    draw_fill(w, y, x + c->x, pad, attr);
    draw_clean(w, y, x + c->x + pad, c->w - pad, clean, attr);
    free(clean);
}

int text_cols(const char *raw, unsigned san)
{
    char *clean = sanitize_str(raw, san);
    int n = sanitize_width(clean);
    free(clean);
    return n;
}

void col_content(ui_col *c, int widest, int min_cap, int cap)
{
    int title = (int)strlen(c->title);
    int want = widest > cap ? cap : widest;
    if (want < title)
        want = title;
    c->want = want;
    int need = widest > min_cap ? min_cap : widest;
    if (c->min < need)
        c->min = need;
    if (c->min > want)
        c->min = want;
    if (widest <= want)   /* all of it shows: spare room goes to the other columns */
        c->weight = 0;
}

void col_clock(const ui_ctx *ctx, ui_col *c)
{
    if (!ctx->abs_time)
        return;
    if (c->min < 8)        /* "14:03:05"; a day or more away "05-01 14:03" when there is room */
        c->min = 8;
    if (c->want < 11)
        c->want = 11;
}

void fmt_age(double now, double t, char *out, size_t cap)
{
    if (t <= 0) {
        snprintf(out, cap, "-");
        return;
    }
    double d = now - t;
    if (d < -5) {
        char a[16];
        format_age(-d, a, sizeof a);
        snprintf(out, cap, "+%s", a);
        return;
    }
    format_age(d < 0 ? 0 : d, out, cap);
}

void fmt_time(double t, char *out, size_t cap)
{
    if (t <= 0) {
        snprintf(out, cap, "-");
        return;
    }
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

void fmt_long(long v, char *out, size_t cap)
{
    if (v < 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%ld", v);
}

static int wrap(const char *clean, int width, bool words, void (*line)(const char *s, size_t n, void *ud),
                void *ud)
{
    int lines = 0;
    if (width < 1)
        width = 1;
    const char *p = clean;
    while (*p) {
        const char *start = p, *blank = NULL;
        int cols = 0;
        while (*p && *p != '\n' && cols < width) {
            unsigned char ch = (unsigned char)*p;
            size_t len = ch < 0x80 ? 1 : ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
            char one[5] = {0};
            memcpy(one, p, len);
            int cw = sanitize_width(one);
            if (cols + cw > width)
                break;
            if (ch == ' ' && p > start)
                blank = p;
            cols += cw;
            p += len;
        }
        bool cut = *p && *p != '\n';   /* the line goes on past width */
        if (words && cut && *p == ' ') {
            line(start, (size_t)(p - start), ud);
            p++;
        } else if (words && cut && blank) {
            line(start, (size_t)(blank - start), ud);
            p = blank + 1;
        } else {
            line(start, (size_t)(p - start), ud);
        }
        lines++;
        if (*p == '\n')
            p++;
    }
    return lines;
}

int text_wrap(const char *clean, int width, void (*line)(const char *s, size_t n, void *ud), void *ud)
{
    return wrap(clean, width, false, line, ud);
}

int text_wrap_words(const char *clean, int width, void (*line)(const char *s, size_t n, void *ud), void *ud)
{
    return wrap(clean, width, true, line, ud);
}

void draw_lines_cb(const char *s, size_t n, void *ud)
{
    ui_lines *p = ud;
    if (p->count++ < p->skip || p->left <= 0)
        return;
    char *line = xstrndup(s, n);
    draw_clean(p->w, p->y++, p->x, p->cols, line, p->attr);
    free(line);
    p->left--;
}

typedef struct wrap_draw { WINDOW *w; int y, x, cols, left, drawn, attr; } wrap_draw;

static void wrap_draw_line(const char *s, size_t n, void *ud)
{
    wrap_draw *d = ud;
    if (d->drawn >= d->left)
        return;
    char buf[FIT_CAP];
    snprintf(buf, sizeof buf, "%.*s", (int)n, s);
    draw_clean(d->w, d->y + d->drawn++, d->x, d->cols, buf, d->attr);
}

int draw_wrap(WINDOW *w, int y, int x, int cols, int max_lines, const char *raw, int attr, unsigned san)
{
    char *clean = sanitize_str(raw, san);
    wrap_draw d = {w, y, x, cols, max_lines, 0, attr};
    text_wrap_words(clean, cols, wrap_draw_line, &d);
    free(clean);
    return d.drawn;
}

int slot_for_status(const char *s)
{
    if (!s)
        return TS_NORMAL;
    if (strcasecmp(s, "failed") == 0 || strcasecmp(s, "error") == 0 || strcasecmp(s, "timeout") == 0 ||
        strcasecmp(s, "dead") == 0 || strcasecmp(s, "abandoned") == 0)
        return TS_FAILED;
    if (strcasecmp(s, "completed") == 0 || strcasecmp(s, "succeeded") == 0 ||
        strcasecmp(s, "complete") == 0 || strcasecmp(s, "success") == 0 || strcasecmp(s, "done") == 0)
        return TS_OK;
    if (strcasecmp(s, "running") == 0 || strcasecmp(s, "in_progress") == 0 ||
        strcasecmp(s, "scheduled") == 0 || strcasecmp(s, "queued") == 0 ||
        strcasecmp(s, "pending") == 0 || strcasecmp(s, "requested") == 0)
        return TS_RUNNING;
    return TS_NORMAL;
}

int slot_for_health(rd_health h)
{
    switch (h) {
    case RD_HEALTH_HEALTHY: return TS_OK;
    case RD_HEALTH_DEGRADED: return TS_WARNING;
    case RD_HEALTH_UNHEALTHY: return TS_FAILED;
    default: return TS_DIM;
    }
}
