/* A system's last hour, sampled from its session's model and kept on disk (syshist.h). */
#include "syshist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fleet.h"
#include "../core/fsperm.h"
#include "../actions/journal.h"
#include "../core/testhook.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "bgwrite.h"

struct rd_syshist {
    rd_history h;
    char *path;                /* NULL: nowhere to keep it */
    const rd_model *m;         /* borrowed */
    const rd_system_cfg *c;
    rd_event *tick;        /* one sample per step; NULL without a loop */
    rd_event *save;        /* the periodic save */
    bool dirty;                /* a sample since the last save */
    rd_bgwrite *writer;        /* the saves' thread (bgwrite.h) */
    /* the workers unhealthy or draining at the last sample ("u:NAME", "d:NAME", sorted;
     * at most SYSHIST_BAD: a fleet-wide outage names its first ones), to see who turned */
    char **bad;
    size_t nbad;
    bool bad_known;            /* a sample was taken: the first one only learns the set */
};

enum { SYSHIST_BAD = 256 };

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bad_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The workers that turned unhealthy or draining since the last sample, as the ring's
 * events (history_event). */
static void workers_turned(rd_syshist *sh, double now)
{
    const rd_model *m = sh->m;
    char **cur = xcalloc(2 * m->workers.n + 1, sizeof *cur);
    size_t n = 0;
    for (size_t i = 0; i < m->workers.n && n + 2 <= SYSHIST_BAD; i++) {
        const rd_worker *w = &m->workers.items[i];
        const char *name = w->name && *w->name ? w->name : w->id;
        if (!name)
            continue;
        if (w->health == RD_HEALTH_UNHEALTHY)
            cur[n++] = xasprintf("u:%s", name);
        if (w->status && (strcmp(w->status, "draining") == 0 || strcmp(w->status, "cordoned") == 0))
            cur[n++] = xasprintf("d:%s", name);
    }
    if (n > 1)
        qsort(cur, n, sizeof *cur, str_cmp);
    for (size_t i = 0; sh->bad_known && i < n; i++)
        if (!bsearch(&cur[i], sh->bad, sh->nbad, sizeof *sh->bad, str_cmp))
            history_event(&sh->h, now, cur[i][0] == 'u' ? HEV_UNHEALTHY : HEV_DRAINING, cur[i] + 2);
    bad_free(sh->bad, sh->nbad);
    sh->bad = cur;
    sh->nbad = n;
    sh->bad_known = true;
}

/* The journal's directory (actions/journal.h: $XDG_STATE_HOME/redrive or its default). */
static char *state_base(void)
{
    char *j = journal_default_path();
    char *slash = j ? strrchr(j, '/') : NULL;
    if (slash)
        *slash = '\0';
    return j;
}

char *syshist_path(const char *system)
{
    char *base = state_base();
    if (!base || !system || !*system)
        return free(base), NULL;
    size_t n = strlen(system);
    char *name = xmalloc(n * 3 + 1), *o = name;
    for (const unsigned char *p = (const unsigned char *)system; *p; p++) {
        bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || (*p == '.' && p != (const unsigned char *)system);
        o += keep ? sprintf(o, "%c", *p) : sprintf(o, "%%%02X", *p);
    }
    char *path = xasprintf("%s/history/%s.hist", base, name);
    free(name);
    free(base);
    return path;
}

bool syshist_read(const char *system, rd_history *h, char *why, size_t whycap)
{
    char *path = syshist_path(system);
    bool damaged = false;
    why[0] = '\0';
    history_init(h);
    bool ok = !path || history_load(h, path, &damaged, why, whycap);
    if (ok && !damaged)
        why[0] = '\0';   /* a missing file: an empty hour, nothing to say */
    free(path);
    return ok;
}

/* The model's values now, as history_add takes them: none while a source is not
 * answering (its part of the model may be old). */
void syshist_sample(rd_syshist *sh, double now)
{
    rd_fleet_row r;
    const rd_model *m = sh->m;
    fleet_row_fill(&r, "", NULL, NULL, m, NULL, sh->c ? &sh->c->fleet : NULL, now);
    if (!r.n_sources || r.src_state != RD_SRC_OK)
        return;
    size_t n = 0;
    const char **names = xcalloc(m->queues.n + 1, sizeof *names);
    double *depth = xcalloc(m->queues.n + 1, sizeof *depth);
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->is_dlq || !q->name || q->depth < 0)
            continue;
        names[n] = q->name;
        depth[n++] = (double)q->depth;
    }
    rd_hist_sample s = {.fail_rate = r.failing_rate, .eligible = (double)r.eligible,
                        .dlq = (double)r.dlq, .unhealthy = (double)r.unhealthy, .nq = n,
                        .qnames = names, .qdepth = depth};
    /* the fleet's marks: "<=N" (may include superseded failures) before "N+" (a cap, or
     * the page's count with more pages) */
    if (r.eligible > 0)
        s.mark[HIST_ELIGIBLE] = r.eligible_upper ? HIST_UPPER : r.eligible_more ? HIST_LOWER : HIST_EXACT;
    history_add(&sh->h, now, &s);
    workers_turned(sh, now);
    sh->dirty = true;
    free(names);
    free(depth);
}

/* The next step's start plus a second (sources answering on the step boundary are in). */
static void arm_tick(rd_syshist *sh)
{
    double now = clock_wall();
    double next = (floor(now / HIST_STEP_S) + 1) * HIST_STEP_S + 1 - now;
    loop_timer_in(sh->tick, next);
}

static void on_tick(int fd, short what, void *ud)
{
    (void)fd, (void)what;
    rd_syshist *sh = ud;
    syshist_sample(sh, clock_wall());
    arm_tick(sh);
}

/* The state directory (created 0700) must be ours and nobody else's to write, and so
 * every directory above it (fsperm_dir_ready). */
static bool dir_ready(const char *path, char *why, size_t whycap)
{
    char *dir = xstrdup(path);
    *strrchr(dir, '/') = '\0';
    bool ok = fsperm_dir_ready(dir, "state directory", why, whycap);
    free(dir);
    return ok;
}

typedef struct hist_job {
    rd_history h;   /* the ring as it was when the save was asked (its marks and events too) */
    char *path;
} hist_job;

static bool hist_job_run(void *arg, char *why, size_t whycap)
{
    hist_job *j = arg;
    return dir_ready(j->path, why, whycap) && history_save(&j->h, j->path, why, whycap);
}

static void hist_job_free(void *arg)
{
    hist_job *j = arg;
    free(j->path);
    free(j);
}

/* history_save (with its fdatasync) on the writer thread, of a copy of the ring: the loop
 * goes on at once. One save at a time; a failed one is tried again at the next. */
static void on_save(int fd, short what, void *ud)
{
    (void)fd, (void)what;
    rd_syshist *sh = ud;
    char why[300];
    if (bgwrite_failed(sh->writer, why, sizeof why))
        sh->dirty = true;
    if (!sh->dirty || bgwrite_busy(sh->writer))
        return;
    hist_job *j = xmalloc(sizeof *j);
    memcpy(&j->h, &sh->h, sizeof j->h);
    j->path = xstrdup(sh->path);
    if (bgwrite_queue(sh->writer, hist_job_run, hist_job_free, j, why, sizeof why))
        sh->dirty = false;
}

rd_syshist *syshist_open(const char *system, rd_loop *base, const rd_model *m,
                         const rd_system_cfg *c, char *why, size_t whycap)
{
    rd_syshist *sh = xcalloc(1, sizeof *sh);
    sh->m = m;
    sh->c = c;
    sh->path = syshist_path(system);
    why[0] = '\0';
    bool damaged = false;
    history_init(&sh->h);
    if (sh->path && !history_load(&sh->h, sh->path, &damaged, why, whycap)) {
        history_init(&sh->h);   /* refused (not ours): kept in memory only, never written */
        free(sh->path);
        sh->path = NULL;
    } else if (!damaged) {
        why[0] = '\0';   /* a missing file: an empty hour, nothing to say */
    }
    sh->writer = bgwrite_new();
    if (base) {
        sh->tick = loop_timer_new(base, on_tick, sh);
        if (sh->path)
            sh->save = loop_every_new(base, on_save, sh);
    }
    return sh;
}

void syshist_start(rd_syshist *sh)
{
    if (!sh->tick)
        return;
    arm_tick(sh);
    const char *every = testhook_env("REDRIVE_HISTORY_SAVE_S");   /* tests: a save sooner */
    double save_s = every && atof(every) > 0 ? atof(every) : SYSHIST_SAVE_S;
    if (sh->save)
        loop_timer_in(sh->save, save_s);
}

void syshist_free(rd_syshist *sh)
{
    if (!sh)
        return;
    bgwrite_free(sh->writer);   /* a save under way finished first */
    char why[300];
    if (sh->dirty && sh->path && dir_ready(sh->path, why, sizeof why))
        history_save(&sh->h, sh->path, why, sizeof why);
    if (sh->tick)
        loop_event_free(sh->tick);
    if (sh->save)
        loop_event_free(sh->save);
    free(sh->path);
    bad_free(sh->bad, sh->nbad);
    free(sh);
}

const rd_history *syshist_get(const rd_syshist *sh)
{
    return &sh->h;
}
