/* One system's last hour (history.h): the ring keyed by absolute step, and its file. */
#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsperm.h"

#define HIST_MAGIC "redrive-history 1"
enum { HIST_LINE_MAX = 4096 };

/* 0 (no step) outside (0, HIST_TIME_MAX): a tampered clock or file never reaches the
 * cast with a value a long cannot hold, nor a negative slot. */
static long step_of(double t)
{
    return t > 0 && t < HIST_TIME_MAX ? (long)floor(t / HIST_STEP_S) : 0;
}

static int slot_of(long step)
{
    return (int)(step % HIST_N);
}

static void clear_series(rd_history *h, int series)
{
    for (int i = 0; i < HIST_N; i++) {
        h->v[series][i] = NAN;
        h->mark[series][i] = HIST_EXACT;
    }
}

void history_init(rd_history *h)
{
    memset(h, 0, sizeof *h);
    for (int s = 0; s < HIST_SERIES; s++)
        clear_series(h, s);
}

/* The slot of step, emptied first when it last held an older step. */
static int slot_claim(rd_history *h, long step)
{
    int slot = slot_of(step);
    if (h->step[slot] != step) {
        h->step[slot] = step;
        for (int s = 0; s < HIST_SERIES; s++) {
            h->v[s][slot] = NAN;
            h->mark[s][slot] = HIST_EXACT;
        }
    }
    return slot;
}

static void put(rd_history *h, int series, int slot, double v, unsigned char mark)
{
    h->v[series][slot] = v < 0 || isnan(v) ? NAN : v > FLT_MAX ? FLT_MAX : (float)v;
    h->mark[series][slot] = isnan(h->v[series][slot]) || mark > HIST_UPPER ? HIST_EXACT : mark;
}

int history_queue(const rd_history *h, const char *name)
{
    for (int i = 0; i < HIST_QUEUES; i++)
        if (h->qname[i][0] && strcmp(h->qname[i], name) == 0)
            return HIST_FIXED + i;
    return -1;
}

static float series_peak(const rd_history *h, int series)
{
    float peak = -1;
    for (int i = 0; i < HIST_N; i++)
        if (!isnan(h->v[series][i]) && h->v[series][i] > peak)
            peak = h->v[series][i];
    return peak;
}

int history_queues_deepest(const rd_history *h, double now, int *series)
{
    float depth[HIST_QUEUES], peak[HIST_QUEUES];
    int n = 0;
    for (int k = 0; h && k < HIST_QUEUES; k++) {
        if (!h->qname[k][0])
            continue;
        float v;
        depth[k] = history_last(h, HIST_FIXED + k, now, 6, &v) ? v : -1;   /* the last minute */
        peak[k] = series_peak(h, HIST_FIXED + k);
        int at = n++;
        for (; at > 0; at--) {   /* insertion: deeper now, else higher peak, else slot */
            int o = series[at - 1] - HIST_FIXED;
            if (depth[o] > depth[k] || (depth[o] == depth[k] && peak[o] >= peak[k]))
                break;
            series[at] = series[at - 1];
        }
        series[at] = HIST_FIXED + k;
    }
    return n;
}

/* The queue slot for a queue new to the history at depth: a free one, else the lowest
 * peak among those not in keep (the queues being recorded now) when depth passes that
 * peak (a queue as shallow as the tracked ones does not push one out: ties would churn). */
static int queue_claim(rd_history *h, const char *name, const bool *keep, double depth)
{
    int best = -1;
    float best_peak = 0;
    bool free_slot = false;
    for (int i = 0; i < HIST_QUEUES; i++) {
        if (!h->qname[i][0]) {
            best = i;
            free_slot = true;
            break;
        }
        float p = series_peak(h, HIST_FIXED + i);
        if (!keep[i] && (best < 0 || p < best_peak)) {
            best = i;
            best_peak = p;
        }
    }
    if (best < 0 || (!free_slot && !(depth > best_peak)))
        return -1;
    snprintf(h->qname[best], HIST_QNAME, "%s", name);
    clear_series(h, HIST_FIXED + best);
    return HIST_FIXED + best;
}

/* Indexes of the deepest min(nq, HIST_QUEUES) queues of s, deepest first. */
static size_t deepest(const rd_hist_sample *s, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nq; i++) {
        if (!s->qnames[i] || !s->qnames[i][0] || !(s->qdepth[i] >= 0))
            continue;
        size_t at;
        if (n < HIST_QUEUES)
            at = n++;
        else if (s->qdepth[i] > s->qdepth[idx[HIST_QUEUES - 1]])
            at = HIST_QUEUES - 1;
        else
            continue;
        idx[at] = i;
        for (; at > 0 && s->qdepth[idx[at - 1]] < s->qdepth[idx[at]]; at--) {
            size_t t = idx[at - 1];
            idx[at - 1] = idx[at];
            idx[at] = t;
        }
    }
    return n;
}

static void add_queues(rd_history *h, int slot, const rd_hist_sample *s)
{
    size_t idx[HIST_QUEUES];
    size_t n = deepest(s, idx);
    bool keep[HIST_QUEUES] = {0};
    for (size_t k = 0; k < n; k++) {
        int q = history_queue(h, s->qnames[idx[k]]);
        if (q >= 0)
            keep[q - HIST_FIXED] = true;
    }
    for (size_t k = 0; k < n; k++) {
        int q = history_queue(h, s->qnames[idx[k]]);
        if (q < 0 && (q = queue_claim(h, s->qnames[idx[k]], keep, s->qdepth[idx[k]])) >= 0)
            keep[q - HIST_FIXED] = true;
    }
    /* every tracked queue the sample names gets its depth, deepest or not */
    for (size_t i = 0; i < s->nq; i++) {
        int q = s->qnames[i] ? history_queue(h, s->qnames[i]) : -1;
        if (q >= 0)
            put(h, q, slot, s->qdepth[i], HIST_EXACT);
    }
}

void history_add(rd_history *h, double now, const rd_hist_sample *s)
{
    long step = step_of(now);
    if (step <= 0)
        return;
    int slot = slot_claim(h, step);
    put(h, HIST_FAIL_RATE, slot, s->fail_rate, s->mark[HIST_FAIL_RATE]);
    put(h, HIST_ELIGIBLE, slot, s->eligible, s->mark[HIST_ELIGIBLE]);
    put(h, HIST_DLQ, slot, s->dlq, s->mark[HIST_DLQ]);
    put(h, HIST_UNHEALTHY, slot, s->unhealthy, s->mark[HIST_UNHEALTHY]);
    if (s->nq && s->qnames && s->qdepth)
        add_queues(h, slot, s);
}

void history_event(rd_history *h, double now, rd_hist_event_kind kind, const char *name)
{
    long step = step_of(now);
    if (step <= 0 || !name || !*name)
        return;
    rd_hist_event *e = &h->ev[h->ev_next];
    h->ev_next = (h->ev_next + 1) % HIST_EVENTS;
    e->step = step;
    e->kind = (char)kind;
    snprintf(e->name, sizeof e->name, "%s", name);
}

static int ev_order(const void *pa, const void *pb)
{
    const rd_hist_event *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return strcmp(a->name, b->name);
}

size_t history_events(const rd_history *h, double from, double to, rd_hist_event *out, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i < HIST_EVENTS && n < cap; i++) {
        const rd_hist_event *e = &h->ev[i];
        double at = (double)e->step * HIST_STEP_S;
        if (e->step > 0 && at >= from && at < to)
            out[n++] = *e;
    }
    if (n > 1)
        qsort(out, n, sizeof *out, ev_order);
    return n;
}

bool history_covers(const rd_history *h, double from, double to)
{
    for (int i = 0; i < HIST_N; i++) {
        double at = (double)h->step[i] * HIST_STEP_S;
        if (h->step[i] > 0 && at >= from && at < to)
            return true;
    }
    return false;
}

bool history_at(const rd_history *h, int series, double from, double to, float *v)
{
    long best = 0;
    for (int i = 0; series >= 0 && series < HIST_SERIES && i < HIST_N; i++) {
        double at = (double)h->step[i] * HIST_STEP_S;
        if (h->step[i] > best && at >= from && at < to && !isnan(h->v[series][i])) {
            best = h->step[i];
            *v = h->v[series][i];
        }
    }
    return best > 0;
}

void history_series(const rd_history *h, int series, double now, float *out, int n)
{
    long last = step_of(now);
    if (n > HIST_N)
        n = HIST_N;
    for (int k = 0; k < n; k++) {
        long st = last - (n - 1 - k);
        int slot = slot_of(st);
        bool ok = series >= 0 && series < HIST_SERIES && st > 0 && h->step[slot] == st;
        out[k] = ok ? h->v[series][slot] : NAN;
    }
}

void history_marks(const rd_history *h, int series, double now, unsigned char *out, int n)
{
    long last = step_of(now);
    if (n > HIST_N)
        n = HIST_N;
    for (int k = 0; k < n; k++) {
        long st = last - (n - 1 - k);
        int slot = slot_of(st);
        bool ok = series >= 0 && series < HIST_SERIES && st > 0 && h->step[slot] == st;
        out[k] = ok ? h->mark[series][slot] : HIST_EXACT;
    }
}

bool history_newest(const rd_history *h, int series, double now, int n, float *v, rd_hist_mark *mark)
{
    float buf[HIST_N];
    unsigned char mk[HIST_N];
    if (n > HIST_N)
        n = HIST_N;
    history_series(h, series, now, buf, n);
    history_marks(h, series, now, mk, n);
    for (int k = n - 1; k >= 0; k--)
        if (!isnan(buf[k])) {
            *v = buf[k];
            if (mark)
                *mark = (rd_hist_mark)mk[k];
            return true;
        }
    return false;
}

bool history_last(const rd_history *h, int series, double now, int n, float *v)
{
    return history_newest(h, series, now, n, v, NULL);
}

int history_count_marked(const rd_history *h, int series, double now, rd_hist_mark mark)
{
    float v[HIST_N];
    unsigned char mk[HIST_N];
    history_series(h, series, now, v, HIST_N);
    history_marks(h, series, now, mk, HIST_N);
    int n = 0;
    for (int k = 0; k < HIST_N; k++)
        n += !isnan(v[k]) && mk[k] == mark;
    return n;
}

void history_mark_text(rd_hist_mark mark, const char *text, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", mark == HIST_UPPER ? "<=" : "", text, mark == HIST_LOWER ? "+" : "");
}

void history_bounds_note(const rd_history *h, int series, double now, char *out, size_t cap)
{
    int up = history_count_marked(h, series, now, HIST_UPPER);
    int lo = history_count_marked(h, series, now, HIST_LOWER);
    char a[48] = "", b[48] = "";
    if (up)
        snprintf(a, sizeof a, "<=: %d upper bound%s", up, up == 1 ? "" : "s");
    if (lo)
        snprintf(b, sizeof b, "+: %d lower bound%s", lo, lo == 1 ? "" : "s");
    if (up || lo)
        snprintf(out, cap, "  (%s%s%s)", a, up && lo ? ", " : "", b);
    else if (cap)
        out[0] = '\0';
}

/* ---- the file ---- */

static bool name_safe(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("._:/-", c) != NULL;
}

static void name_encode(FILE *f, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (name_safe(*p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* false on a bad escape, a NUL, an unsafe raw byte or a name too long */
static bool name_decode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p; p++) {
        int c = (unsigned char)*p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (lo < 0 || (c = hi * 16 + lo) == 0)
                return false;
            p += 2;
        } else if (!name_safe((unsigned char)c)) {
            return false;
        }
        if (n + 1 >= cap)
            return false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return n > 0;
}

static void write_body(FILE *f, const rd_history *h)
{
    fprintf(f, "%s\n", HIST_MAGIC);
    for (int i = 0; i < HIST_QUEUES; i++)
        if (h->qname[i][0]) {
            fprintf(f, "q %d ", i);
            name_encode(f, h->qname[i]);
            fputc('\n', f);
        }
    for (int slot = 0; slot < HIST_N; slot++) {
        if (!h->step[slot])
            continue;
        fprintf(f, "s %ld", h->step[slot]);
        for (int s = 0; s < HIST_SERIES; s++)
            if (isnan(h->v[s][slot]))
                fputs(" -", f);
            else
                fprintf(f, " %s%.7g%s", h->mark[s][slot] == HIST_UPPER ? "<=" : "", (double)h->v[s][slot],
                        h->mark[s][slot] == HIST_LOWER ? "+" : "");
        fputc('\n', f);
    }
    /* the events last, oldest first (a reader that knows none keeps every sample) */
    for (int k = 0; k < HIST_EVENTS; k++) {
        const rd_hist_event *e = &h->ev[(h->ev_next + k) % HIST_EVENTS];
        if (!e->step)
            continue;
        fprintf(f, "e %ld %c ", e->step, e->kind);
        name_encode(f, e->name);
        fputc('\n', f);
    }
}

bool history_save(const rd_history *h, const char *path, char *why, size_t whycap)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        snprintf(why, whycap, "history file path too long");
        return false;
    }
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        snprintf(why, whycap, "cannot write history file %s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    write_body(f, h);
    bool ok = fflush(f) == 0 && !ferror(f) && fdatasync(fileno(f)) == 0;
    int err = errno;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) != 0) {
        err = errno;
        ok = false;
    }
    if (!ok) {
        snprintf(why, whycap, "cannot write history file %s: %s", path, strerror(err));
        unlink(tmp);
    }
    return ok;
}

/* "-" (a gap), a value, "<=" a value (an upper bound) or a value "+" (a lower bound). */
static bool parse_float(const char *tok, float *out, unsigned char *mark)
{
    *mark = HIST_EXACT;
    if (strcmp(tok, "-") == 0) {
        *out = NAN;
        return true;
    }
    if (strncmp(tok, "<=", 2) == 0) {
        *mark = HIST_UPPER;
        tok += 2;
    }
    if ((*tok < '0' || *tok > '9') && *tok != '.')   /* no sign, "nan" or second mark */
        return false;
    char *end;
    errno = 0;
    double d = strtod(tok, &end);
    if (*end == '+' && end[1] == '\0' && *mark == HIST_EXACT) {
        *mark = HIST_LOWER;
        end++;
    }
    if (errno || *end || end == tok || !isfinite(d) || d < 0 || d > FLT_MAX)
        return false;
    *out = (float)d;
    return true;
}

static bool parse_queue(rd_history *h, char *rest)
{
    char *sp = strchr(rest, ' ');
    if (!sp)
        return false;
    *sp = '\0';
    char *end;
    long i = strtol(rest, &end, 10);
    if (*end || end == rest || i < 0 || i >= HIST_QUEUES)
        return false;
    char name[HIST_QNAME];   /* a damaged name leaves the slot as it was, never half written */
    if (!name_decode(sp + 1, name, sizeof name))
        return false;
    memcpy(h->qname[i], name, strlen(name) + 1);
    return true;
}

static bool parse_sample(rd_history *h, char *rest)
{
    char *save = NULL, *tok = strtok_r(rest, " ", &save);
    char *end;
    long step = tok ? strtol(tok, &end, 10) : 0;
    if (!tok || *end || step <= 0 ||
        step >= (long)(HIST_TIME_MAX / HIST_STEP_S))
        return false;
    float v[HIST_SERIES];
    unsigned char mk[HIST_SERIES];
    for (int s = 0; s < HIST_SERIES; s++)
        if (!(tok = strtok_r(NULL, " ", &save)) || !parse_float(tok, &v[s], &mk[s]))
            return false;
    if (strtok_r(NULL, " ", &save))
        return false;
    int slot = slot_of(step);
    if (h->step[slot] > step)
        return true;          /* an older step for a slot already newer: keep the newer */
    h->step[slot] = step;
    for (int s = 0; s < HIST_SERIES; s++) {
        h->v[s][slot] = v[s];
        h->mark[s][slot] = mk[s];
    }
    return true;
}

/* "e STEP KIND NAME": appended to the ring in file order */
static bool parse_event(rd_history *h, char *rest)
{
    char *end;
    long step = strtol(rest, &end, 10);
    if (end == rest || *end != ' ' || step <= 0 || step >= (long)(HIST_TIME_MAX / HIST_STEP_S) ||
        (end[1] != HEV_UNHEALTHY && end[1] != HEV_DRAINING) || end[2] != ' ')
        return false;
    char name[HIST_ENAME];
    if (!name_decode(end + 3, name, sizeof name))
        return false;
    rd_hist_event *e = &h->ev[h->ev_next];
    h->ev_next = (h->ev_next + 1) % HIST_EVENTS;
    e->step = step;
    e->kind = end[1];
    memcpy(e->name, name, strlen(name) + 1);
    return true;
}

static bool parse_line(rd_history *h, char *line, int lineno)
{
    if (lineno == 1)
        return strcmp(line, HIST_MAGIC) == 0;
    if (strncmp(line, "q ", 2) == 0)
        return parse_queue(h, line + 2);
    if (strncmp(line, "s ", 2) == 0)
        return parse_sample(h, line + 2);
    if (strncmp(line, "e ", 2) == 0)
        return parse_event(h, line + 2);
    return false;
}

bool history_load(rd_history *h, const char *path, bool *damaged, char *why, size_t whycap)
{
    history_init(h);
    *damaged = false;
    if (!fsperm_parents_ok(path, "history file", why, whycap))
        return false;
    int fd = fsperm_open(path, O_RDONLY | O_NOFOLLOW, 0, "history file",
                         FSP_REGULAR | FSP_PRIVATE, NULL, why, whycap);
    if (fd < 0)
        return errno == ENOENT;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, whycap, "cannot read history file %s: %s", path, strerror(errno));
        close(fd);
        return false;
    }
    char line[HIST_LINE_MAX];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        bool whole = len && line[len - 1] == '\n';
        if (whole)
            line[--len] = '\0';
        if (!whole || !parse_line(h, line, lineno)) {
            *damaged = true;
            snprintf(why, whycap, "%s:%d: damaged history line; the rest is dropped", path,
                     lineno);
            break;
        }
    }
    fclose(f);
    return true;
}
