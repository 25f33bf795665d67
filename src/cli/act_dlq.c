/*
 * redrive retry --dlq [--dlq-reason R] [--dlq-queue Q] [--filter TEXT] [--limit N] [--rate N] --yes
 * redrive resolve --dlq [the same] --yes
 *
 * The dead letters as a set, across every page of the store's DLQ (Tasker's tasks_dlq,
 * OpenAgents' dead jobs: [query dlq], read as the console pages it, pg_dlq.c), never only a
 * page: the store searches the text (--filter, else the reason) where its query can, and
 * each entry is kept when its reason and queue are exactly the ones asked and it holds the
 * text. retry: each entry's execution (a Tasker task's failed step) is judged by the
 * system's own rule and the retry-loop breaker (core/guard.h), as `retry --status` does;
 * resolve: each pending entry is resolved through the core's dlq_update route ([action
 * resolve]). Only the targets to send are frozen into a batch record (actions/batchrec.h),
 * then the breakdown, the confirmation and the run (act_tally_send): resumable with
 * `redrive batch resume ID`. A broker's or SQS's dead letters are not a store's: refused.
 * --select-only: the console's whole-set action on the DLQ (ui/setretry.c): the same
 * selection, reported as act_select.c reports it (act_report_*), the record staged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/groups.h"
#include "../core/xalloc.h"
#include "act_priv.h"

/* One entry of a page, copied: the page is gone once the store is asked about a target. */
typedef struct dlq_pick {
    char *entry, *target, *parent;
} dlq_pick;

typedef struct dlq_run {
    const act_opts *o;
    lookup_run *l;
    unsigned san;
    act_tally t;
    rd_retry_record *recs;
    size_t nrec;
    bool need_task;            /* the retry route names {task}: an entry needs its task */
    char down[400];            /* the store failed while judging: the rest is unknown */
    char why[400];
} dlq_run;

static bool has_text(const char *field, const char *text)
{
    return field && strcasestr(field, text);
}

/* The entry is in the set: its reason and queue exactly, the text in one of the fields
 * the store searches (the store did the search already where its query takes $5). */
static bool dlq_match(const act_opts *o, const rd_dlq_entry *d)
{
    if (o->dlq_reason && (!d->reason || strcasecmp(d->reason, o->dlq_reason) != 0))
        return false;
    if (o->dlq_queue && (!d->queue || strcmp(d->queue, o->dlq_queue) != 0))
        return false;
    const char *t = o->filter;
    return !t || has_text(d->id, t) || has_text(d->queue, t) || has_text(d->execution_id, t) ||
           has_text(d->reason, t) || has_text(d->origin_queue, t) || has_text(d->payload, t);
}

static const rd_dlq_part *store_part(const rd_model *m)
{
    for (size_t i = 0; i < m->dlq_parts.n; i++)
        if (strcmp(m->dlq_parts.items[i].owner, "postgresql") == 0)
            return &m->dlq_parts.items[i];
    return NULL;
}

/* The matching entries of the page read: what a retry targets (a Tasker task's failed
 * step with its task, else the execution), or the entry itself for a resolve. */
static dlq_pick *page_picks(const dlq_run *s, const rd_dlq_part *p, size_t *n)
{
    dlq_pick *v = xcalloc(p->n + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const rd_dlq_entry *d = &p->items[i];
        if (!d->id || !dlq_match(s->o, d))
            continue;
        dlq_pick *k = &v[(*n)++];
        k->entry = xstrdup(d->id);
        const char *target = s->o->kind == RD_ACT_RESOLVE ? d->id : d->step_id ? d->step_id : d->execution_id;
        k->target = target ? xstrdup(target) : NULL;
        k->parent = s->o->kind == RD_ACT_RETRY && d->step_id && d->execution_id ? xstrdup(d->execution_id) : NULL;
    }
    return v;
}

static void picks_free(dlq_pick *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].entry);
        free(v[i].target);
        free(v[i].parent);
    }
    free(v);
}

/* Execution id among the executions the model holds now (a lookup jumps to a page that
 * starts at its target: the entries after it often name the rows after it), or NULL. */
static const rd_execution *loaded(lookup_run *l, const char *id)
{
    const rd_model *m = session_model(l->ss);
    for (size_t i = 0; i < m->execs.n; i++)
        if (m->execs.items[i].id && strcasecmp(m->execs.items[i].id, id) == 0)
            return &m->execs.items[i];
    return NULL;
}

/* One entry judged, and frozen into the record when it is sent; false with s->why. */
static bool dlq_one(dlq_run *s, const dlq_pick *k)
{
    if (s->t.c.total >= (size_t)s->t.limit) {
        s->t.capped = true;
        return true;
    }
    rd_target t = {.id = k->target, .parent = k->parent};
    if (s->o->kind == RD_ACT_RETRY && k->target && act_tally_open(&s->t, k->target, k->parent))
        return true;           /* in an open batch: left out, said after the selection */
    rd_guard_item it = {.id = k->target ? k->target : k->entry, .elig = RD_ELIG_YES, .why = ""};
    char why[400] = "", *fp = NULL;
    const rd_execution *e;
    if (s->o->kind == RD_ACT_RETRY) {
        if (!k->target || (s->need_task && !k->parent)) {
            it.elig = RD_ELIG_NO;
            snprintf(why, sizeof why, "DLQ entry %.60s names no %s to retry", k->entry,
                     k->target ? "failed step" : "execution");
        } else if ((e = loaded(s->l, k->target)))   /* on the page the last lookup brought */
            act_guard_judge(e, &t, s->recs, s->nrec, &it, why, sizeof why, &fp);
        else
            act_guard_read(s->l, &t, s->recs, s->nrec, &it, why, sizeof why, &fp, s->down);
        it.why = why;
    }
    rd_guard_kind g = guard_add(&s->t.c, &it);
    bool ok = true;
    if (!guard_sends(g, s->o->force || (g == GUARD_LOOP && s->o->override_loop)))
        act_report_held(s->o, &s->t, &it, s->san);
    else {
        t.override_ = guard_override_name(g);
        ok = batchrec_add(s->t.rec, &t, s->why, sizeof s->why);
    }
    free(fp);
    return ok;
}

/* Every page of the store's DLQ, newest first, until the last or the limit. */
static bool dlq_pages(dlq_run *s)
{
    session_dlq_order(s->l->ss, false, s->o->filter ? s->o->filter : s->o->dlq_reason);
    const rd_model *m = lookup_settle(s->l, NULL);
    for (;;) {
        if (!lookup_page_ok(m, s->l->ss, s->why, sizeof s->why))
            return false;
        const rd_dlq_part *p = store_part(m);
        if (!p || m->dlq_first <= 0) {
            snprintf(s->why, sizeof s->why, "this system's store has no DLQ to read a page at a time "
                     "(its profile's [query dlq]): a broker's dead letters are acted on one by one");
            return false;
        }
        s->t.pages++;
        s->t.read += p->n;
        size_t n;
        dlq_pick *v = page_picks(s, p, &n);
        bool more = m->dlq_more, ok = true;
        for (size_t i = 0; i < n && ok && !s->t.capped; i++)
            ok = dlq_one(s, &v[i]);
        picks_free(v, n);
        if (ok && s->o->select_only)
            act_report_page(&s->t);
        if (!ok || s->t.capped || !more)
            return ok;
        session_dlq_page(s->l->ss, +1);
        m = lookup_settle(s->l, NULL);
    }
}

/* "dlq reason=R queue=Q text=T", for the record and the confirmation. */
static char *selection_text(const act_opts *o)
{
    return xasprintf("dlq%s%s%s%s%s%s", o->dlq_reason ? " reason=" : "", o->dlq_reason ? o->dlq_reason : "",
                     o->dlq_queue ? " queue=" : "", o->dlq_queue ? o->dlq_queue : "",
                     o->filter ? " text=" : "", o->filter ? o->filter : "");
}

static void say_selection(const dlq_run *s, const char *sel)
{
    char line[700];
    const act_tally *t = &s->t;
    bool retry = s->o->kind == RD_ACT_RETRY;
    const char *what = retry ? (t->c.total == 1 ? "DLQ entry's execution" : "DLQ entries' executions")
                             : (t->c.total == 1 ? "DLQ entry" : "DLQ entries");
    snprintf(line, sizeof line, "selected %zu %s (%s) from %zu page%s of the store's DLQ", t->c.total, what,
             sel, t->pages, t->pages == 1 ? "" : "s");
    err_clean(s->san, "redrive: ", line);
    if (t->capped)
        fprintf(stderr, "redrive: capped at %ld entries (--limit): older ones were not read\n", t->limit);
    if (retry) {
        guard_breakdown(&t->c, line, sizeof line);
        fprintf(stderr, "redrive: %s\n", line);
    }
}

static bool read_pages(void *ud) { return dlq_pages(ud); }
static void say(void *ud, const char *sel) { say_selection(ud, sel); }

int act_dlq(act_opts *o, lookup_run *l, unsigned san)
{
    double rate;
    dlq_run s = {.o = o, .l = l, .san = san};
    if (o->kind != RD_ACT_RETRY && o->kind != RD_ACT_RESOLVE) {
        fputs("redrive: --dlq selects dead letters to retry or resolve\n", stderr);
        return RD_EXIT_USAGE;
    }
    if (!act_select_limits(o, &rate, &s.t.limit))
        return RD_EXIT_USAGE;
    rd_actor *actor = session_actor(l->ss);
    if (!act_select_may(o, actor, o->kind, san))
        return RD_EXIT_FAIL;
    const rd_profile_action *pa = profile_action(session_profile(l->ss), action_name(o->kind));
    s.need_task = pa && pa->path && strstr(pa->path, "{task}");
    rd_journal_entry *je = NULL;
    size_t nje = 0;
    if (o->kind == RD_ACT_RETRY)
        s.recs = act_loop_records(l->ss, &je, &nje, &s.nrec, san);
    act_stage st = {.t = &s.t, .kind = o->kind, .sel = selection_text(o), .recs = s.recs, .je = je,
                    .nje = nje, .read = read_pages, .say = say, .ud = &s, .why = s.why, .whycap = sizeof s.why};
    return act_stage_run(o, l, &st, rate, san);
}
