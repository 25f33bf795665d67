/* The fleet's sessions: one per configured system on one loop (sessions.h). */
#include "sessions.h"

#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"

typedef struct slot {
    rd_sessions *set;
    size_t i;
    rd_session *s;
    size_t own_diags;          /* diagnostics before this index are the configuration's */
    bool started;
    double pace;               /* the factor to arm when pace_ev fires */
    rd_event *pace_ev;     /* NULL without a loop */
    rd_fleet_trend trend;
    rd_fleet_place place;      /* where its row sorts: the level held for two polls */
} slot;

struct rd_sessions {
    rd_sessions_io io;
    slot *slots;
    size_t n;
    int focus;                 /* -1: all on screen */
};

static void slot_sample(slot *sl, double now)
{
    const rd_system_cfg *c = session_system(sl->s);
    rd_fleet_row r;
    const rd_model *m = session_model(sl->s);
    fleet_row_fill(&r, c ? c->name : "", NULL, NULL, m, NULL, c ? &c->fleet : NULL, now);
    fleet_trend_add(&sl->trend, now, r.dlq, m->failing_rate);
    /* two polls: the time between them, a little less (the pace stretches a background
     * system's polls) */
    double poll = (c && c->poll_s > 0 ? c->poll_s : 2) * (sl->pace > 0 ? sl->pace : 1);
    fleet_place_update(&sl->place, r.level, now, poll * 0.9);
}

static void on_slot_change(void *ud)
{
    slot *sl = ud;
    slot_sample(sl, clock_wall());
    if (sl->set->io.on_change)
        sl->set->io.on_change(sl->set->io.change_ud, sl->i);
}

static void on_pace(int fd, short what, void *ud)
{
    slot *sl = ud;
    (void)fd, (void)what;
    rd_sources *src = session_sources(sl->s);
    if (src)
        sources_set_pace(src, sl->pace);
}

rd_sessions *sessions_new(const rd_opts *opts, const rd_sessions_io *io)
{
    rd_sessions *f = xcalloc(1, sizeof *f);
    f->io = *io;
    f->focus = -1;
    rd_session *first = session_new(opts);
    f->n = session_system_count(first);
    f->slots = xcalloc(f->n ? f->n : 1, sizeof *f->slots);
    for (size_t i = 0; i < f->n; i++) {
        slot *sl = &f->slots[i];
        sl->set = f;
        sl->i = i;
        sl->s = i == 0 ? first : session_new(opts);   /* each its own copy of the config */
        sl->own_diags = session_diags(sl->s)->n;
        rd_session_io sio = {.base = io->base, .parts = io->parts, .on_change = on_slot_change,
                             .change_ud = sl, .on_password = io->on_password,
                             .password_ud = io->password_ud};
        session_open(sl->s, session_system_at(sl->s, i)->name, &sio);
        if (io->base)
            sl->pace_ev = loop_timer_new(io->base, on_pace, sl);
    }
    if (!f->n)
        session_free(first);
    return f;
}

void sessions_free(rd_sessions *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        if (f->slots[i].pace_ev)
            loop_event_free(f->slots[i].pace_ev);
        session_free(f->slots[i].s);
    }
    free(f->slots);
    free(f);
}

size_t sessions_count(const rd_sessions *f) { return f->n; }

rd_session *sessions_at(const rd_sessions *f, size_t i)
{
    return i < f->n ? f->slots[i].s : NULL;
}

int sessions_find(const rd_sessions *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++) {
        const rd_system_cfg *c = session_system_at(f->slots[i].s, i);
        if (!name || (c && strcmp(c->name, name) == 0))
            return (int)i;
    }
    return -1;
}

/*
 * The systems' poll ticks are spread over the interval: system i re-arms (i + 1/2)/n of
 * its new interval later, the one on screen at once. Armed together (start, a focus
 * change) they would poll in the same turn for ever, their answers arriving together, and
 * after a store fault their deadlines and reconnects would come in one wave too.
 */
static void apply_pace(rd_sessions *f)
{
    for (size_t i = 0; i < f->n; i++) {
        slot *sl = &f->slots[i];
        rd_sources *src = session_sources(sl->s);
        if (!src || !sl->started)
            continue;
        bool on_screen = f->focus < 0 || (size_t)f->focus == i;
        sl->pace = on_screen ? 1 : SESSIONS_BACKGROUND_PACE;
        /* half a step off the grid of the system on screen, which re-arms now */
        double delay = sources_interval(src, sl->pace) * ((double)i + 0.5) / (double)f->n;
        if ((size_t)f->focus == i || delay <= 0 || !sl->pace_ev) {
            if (sl->pace_ev)
                loop_timer_stop(sl->pace_ev);
            sources_set_pace(src, sl->pace);
            continue;
        }
        loop_timer_in(sl->pace_ev, delay);
    }
}

void sessions_start(rd_sessions *f)
{
    for (size_t i = 0; i < f->n; i++) {
        session_start(f->slots[i].s);
        f->slots[i].started = true;
    }
    apply_pace(f);
}

void sessions_focus(rd_sessions *f, int i)
{
    if (i == f->focus)
        return;
    f->focus = i;
    apply_pace(f);
}

bool sessions_settled(const rd_sessions *f)
{
    for (size_t i = 0; i < f->n; i++) {
        rd_sources *src = session_sources(f->slots[i].s);
        if (src && !sources_settled(src))
            return false;
    }
    return true;
}

void sessions_rows(const rd_sessions *f, double now, rd_fleet_row *rows, size_t *row_index)
{
    size_t *idx = xcalloc(f->n ? f->n : 1, sizeof *idx);
    for (size_t i = 0; i < f->n; i++) {
        const slot *sl = &f->slots[i];
        const rd_system_cfg *c = session_system_at(sl->s, i);
        fleet_row_fill(&rows[i], c->name, c->ui.banner, c->profile, session_model(sl->s), &sl->trend,
                       &c->fleet, now);
        if (f->io.hold_places && sl->place.known)
            rows[i].place = sl->place.place;
        idx[i] = i;
    }
    /* fleet_sort's order (the place, then the config's), keeping each row's session index
     * alongside (stable) */
    for (size_t i = 1; i < f->n; i++) {
        rd_fleet_row t = rows[i];
        size_t ti = idx[i], j = i;
        for (; j > 0 && fleet_row_cmp(&rows[j - 1], &t) > 0; j--) {
            rows[j] = rows[j - 1];
            idx[j] = idx[j - 1];
        }
        rows[j] = t;
        idx[j] = ti;
    }
    if (row_index)
        memcpy(row_index, idx, f->n * sizeof *idx);
    free(idx);
}

void sessions_copy_diags(const rd_sessions *f, rd_diags *d)
{
    for (size_t i = 0; i < f->n; i++) {
        const rd_diags *own = session_diags(f->slots[i].s);
        for (size_t k = f->slots[i].own_diags; k < own->n; k++) {
            xgrow(&d->msgs, &d->cap, d->n + 1, sizeof *d->msgs);
            d->msgs[d->n++] = xstrdup(own->msgs[k]);   /* already "file:line: message" */
        }
    }
}

void sessions_print_diags(const rd_sessions *f, FILE *out)
{
    for (size_t i = 0; i < f->n; i++)
        session_print_diags(f->slots[i].s, i == 0 ? 0 : f->slots[i].own_diags, out);
}
