/*
 * redrive snapshot: one read of a system for scripts and tests. Runs the sources on an
 * event loop until every source has answered (and the chain / DLQ page asked for has
 * come back) or a deadline passes, then prints JSON or sanitized text.
 * Exit 0 when every source answered, 3 when some did not (partial output), 2 on usage
 * or configuration errors.
 */
#include "cli.h"

#include <langinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../core/fleet.h"
#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/storegroups.h"
#include "../core/suggest.h"
#include "../core/views.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "../session/sessions.h"
#include "../session/syshist.h"
#include "cmdtable.h"

static const double SNAPSHOT_DEADLINE_S = 8.0;

typedef struct snap_opts {
    bool json;
    bool history;              /* --history: the last hour (the console's samples) too */
    bool ascii;                /* --ascii, or a locale that is not UTF-8: text charts in ASCII */
    const rd_view *view;       /* core/views.h; NULL: the overview */
    const char *chain_id;
    const char *status, *filter;
    double hold_s;             /* --for: keep polling this long (trends between polls) */
    double since_s;            /* --since: the error groups' window (0: the default) */
    const char *group;         /* --group ID|FINGERPRINT: the executions of that group */
    char *group_fp;            /* resolved by the store's groups */
    char group_id[GROUPID_LEN + 1];
    long group_total;          /* the store's count of the group in the window; -1 unknown */
} snap_opts;

typedef struct snap_run {
    rd_loop *base;
    rd_session *ss;
    bool want_idle;
    bool started;
    bool held;                 /* the --for time has passed (or none was asked) */
    rd_event *deadline;
    long progress_seen;        /* a first read's items at the last deadline, -1 none */
} snap_run;

static void err_line(const char *msg)
{
    char *clean = sanitize_str(msg, 0);
    fprintf(stderr, "%s\n", clean);
    free(clean);
}

static bool opt_value(int argc, char **argv, int *i, const char *name, const char **out)
{
    if (strcmp(argv[*i], name) != 0)
        return false;
    *out = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

static bool parse_args(int argc, char **argv, snap_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (cli_option_unknown(CMD_SNAPSHOT, argv[i], "redrive snapshot")) {   /* the table decides */
            fputs("see redrive --help\n", stderr);
            return false;
        }
        if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if (strcmp(argv[i], "--history") == 0) {
            o->history = true;
        } else if (opt_value(argc, argv, &i, "--view", &v)) {
            if (!v || !(o->view = view_find(v)) || !o->view->listed) {
                char names[200], hint[200];
                view_names(names, sizeof names, false);
                char *clean = sanitize_str(v ? v : "", 0);
                suggest sg;
                suggest_init(&sg, clean);
                for (size_t k = 0; view_at(k); k++)
                    if (view_at(k)->listed)
                        suggest_add(&sg, view_at(k)->name);
                fprintf(stderr, "redrive snapshot: no view '%.60s'%s; --view needs one of %s\n", clean,
                        suggest_text(&sg, hint, sizeof hint), names);
                free(clean);
                return false;
            }
            if (o->view->needs_id) {
                if (i + 1 >= argc || argv[i + 1][0] == '-') {
                    fprintf(stderr, "redrive snapshot: --view %s needs an execution id\n", v);
                    return false;
                }
                o->chain_id = argv[++i];
            }
        } else if (opt_value(argc, argv, &i, "--for", &v)) {
            char *end = NULL;
            o->hold_s = v ? strtod(v, &end) : -1;
            if (!v || end == v || *end || !(o->hold_s >= 0 && o->hold_s <= 600)) {
                fprintf(stderr, "redrive snapshot: --for needs seconds (0 to 600)\n");
                return false;
            }
        } else if (opt_value(argc, argv, &i, "--since", &v)) {
            if (!sgroups_parse_window(v, &o->since_s)) {
                fprintf(stderr, "redrive snapshot: --since needs a duration from 1m to 30d (e.g. 6h)\n");
                return false;
            }
        } else if (opt_value(argc, argv, &i, "--group", &v)) {
            if (!(o->group = v) || !*v) {
                fprintf(stderr, "redrive snapshot: --group needs a group id or fingerprint\n");
                return false;
            }
        } else if (opt_value(argc, argv, &i, "--status", &v)) {
            if (!(o->status = v)) {
                fprintf(stderr, "redrive snapshot: --status needs a value\n");
                return false;
            }
        } else if (opt_value(argc, argv, &i, "--filter", &v)) {
            if (!(o->filter = v)) {
                fprintf(stderr, "redrive snapshot: --filter needs a value\n");
                return false;
            }
        } else {
            char msg[200];
            snprintf(msg, sizeof msg, "redrive snapshot: unknown argument '%.100s'", argv[i]);
            err_line(msg);
            fputs("see redrive --help\n", stderr);
            return false;
        }
    }
    if (o->group && (!o->view || strcmp(o->view->name, "executions") != 0)) {
        fprintf(stderr, "redrive snapshot: --group goes with --view executions\n");
        return false;
    }
    return true;
}

static void on_change(void *ud)
{
    snap_run *r = ud;
    if (!r->started || !r->held || !session_settled(r->ss))
        return;
    if (r->want_idle && !session_idle(r->ss))
        return;
    if (!session_core_settled(r->ss))
        return;                      /* the core's state (GET /auth/me) is part of it */
    loop_break(r->base);
}

static void on_deadline(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    loop_break(arg);
}

/* Items read by the long first reads under way (the Redis sweep), -1 when none runs. */
static long progress_done(const rd_model *m)
{
    long done = -1;
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].progress.active)
            done = (done < 0 ? 0 : done) + m->sources.items[i].progress.done;
    return done;
}

/* The deadline, extended while a long first read still moves (a large store read under
 * its sweep_budget): the output waits for the whole index unless the read stalls. */
static void on_run_deadline(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    snap_run *r = arg;
    long done = progress_done(session_model(r->ss));
    if (done >= 0 && done != r->progress_seen) {
        r->progress_seen = done;
        loop_timer_in(r->deadline, SNAPSHOT_DEADLINE_S);
        return;
    }
    loop_break(r->base);
}

static void on_held(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    snap_run *r = arg;
    r->held = true;
    on_change(r);
}

/* Sources that never answered are reported as down, with why. */
static bool finish_sources(rd_model *m)
{
    bool all = true;
    for (size_t i = 0; i < m->sources.n; i++) {
        rd_source_status *s = &m->sources.items[i];
        if (s->state == RD_SRC_CONNECTING) {
            char msg[240], prog[200];
            source_progress_text(s, prog, sizeof prog);
            if (prog[0])              /* answered, but the first read stalled: partial */
                snprintf(msg, sizeof msg, "stopped while %s", prog);
            else
                snprintf(msg, sizeof msg, "no answer within %.0f s", SNAPSHOT_DEADLINE_S);
            model_source_fail(m, s->name, msg, clock_wall());
        }
        if (s->state != RD_SRC_OK)
            all = false;
    }
    if (m->core.state == RD_CORE_CHECKING) {
        char msg[64];
        snprintf(msg, sizeof msg, "no answer within %.0f s", SNAPSHOT_DEADLINE_S);
        model_core_probe(m, RD_CORE_DOWN, NULL, msg, clock_wall());
    }
    return all;
}

/* Runs the loop until every source answered (and the chain / DLQ page asked for came
 * back) or the deadline. */
static void run_sources(snap_run *r, const snap_opts *o)
{
    bool dlq = o->view && (o->view->mask & VPART_DLQ);
    bool groups = o->view && (o->view->mask & VPART_GROUPS);
    r->want_idle = o->chain_id || dlq || groups || o->group;
    if (o->status || o->filter) {
        rd_exec_filter f = { .status = (char *)(uintptr_t)o->status,
                             .text = (char *)(uintptr_t)o->filter };
        session_set_filter(r->ss, &f);
    }
    session_start(r->ss);            /* the sources, and the core probe */
    if (o->chain_id && (o->view->mask & VPART_DETAIL))
        session_request_detail(r->ss, o->chain_id);   /* one execution in full */
    else if (o->chain_id)
        session_request_chain(r->ss, o->chain_id);
    if (dlq)
        session_peek_dlq(r->ss, false);
    if (groups || o->group)   /* computed where the data is (a store that cannot: the loaded page) */
        session_request_groups(r->ss, o->since_s > 0 ? o->since_s : SGROUPS_WINDOW_S,
                               sgroups_cap_default());
    r->started = true;
    r->held = o->hold_s <= 0;
    r->progress_seen = -1;
    rd_event *deadline = r->deadline = loop_timer_new(r->base, on_run_deadline, r);
    loop_timer_in(deadline, (double)(time_t)(SNAPSHOT_DEADLINE_S + o->hold_s));   /* whole seconds */
    rd_event *hold = loop_timer_new(r->base, on_held, r);
    if (!r->held)
        loop_timer_in(hold, o->hold_s);
    on_change(r);
    loop_run(r->base);
    loop_event_free(hold);
    loop_event_free(deadline);
}

/* --group: the store's groups (asked with the first read) name the group; then its
 * members are read from the store (the executions filtered by its fingerprint, in the
 * window: the status's own index where the profile has [query by_status]). False having
 * said why. */
static bool read_group(snap_run *r, snap_opts *o)
{
    const rd_model *m = session_model(r->ss);
    const rd_group *g = NULL;
    char why[300], win[16];
    double w = o->since_s > 0 ? o->since_s : SGROUPS_WINDOW_S;
    sgroups_window_text(w, win, sizeof win);
    o->group_total = -1;
    switch (sgroups_resolve(m->sgroups, o->group, &g, why, sizeof why)) {
    case GROUPID_FOUND:
        o->group_fp = xstrdup(g->fp);
        o->group_total = (long)g->count;
        break;
    case GROUPID_FP:
        o->group_fp = xstrdup(o->group);
        w = 0;                        /* not among the window's groups: every failure with it */
        break;
    default: {
        char *msg = xasprintf("redrive snapshot: --group: %s in the last %s (--since widens the window)", why, win);
        err_line(msg);
        free(msg);
        return false;
    }
    }
    groupid_make(o->group_fp, o->group_id);
    rd_exec_filter f = {.status = (char *)(uintptr_t)o->status, .text = (char *)(uintptr_t)o->filter,
                        .fingerprint = o->group_fp, .window_s = w};
    session_set_filter(r->ss, &f);
    r->want_idle = true;
    loop_timer_in(r->deadline = loop_timer_new(r->base, on_run_deadline, r), SNAPSHOT_DEADLINE_S);
    loop_run(r->base);
    loop_event_free(r->deadline);
    return true;
}

/* The group asked for, in the JSON: {"id","fingerprint","total","window_s"}. */
static char *with_group(char *json, const snap_opts *o)
{
    cJSON *doc = cJSON_Parse(json);
    if (!doc)
        return json;
    cJSON *g = cJSON_AddObjectToObject(doc, "group");
    cJSON_AddStringToObject(g, "id", o->group_id);
    char *clean = sanitize_utf8(o->group_fp, strlen(o->group_fp));   /* as the groups' JSON says it */
    cJSON_AddStringToObject(g, "fingerprint", clean);
    free(clean);
    if (o->group_total >= 0)
        cJSON_AddNumberToObject(g, "total", (double)o->group_total);
    else
        cJSON_AddNullToObject(g, "total");
    cJSON_AddNumberToObject(g, "window_s", o->group_total >= 0 ? (o->since_s > 0 ? o->since_s : SGROUPS_WINDOW_S) : 0);
    char *out = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!out)
        return json;
    free(json);
    return out;
}

/* The system's last hour as the console recorded it (session/syshist.h); NULL when not
 * asked for. A file refused is said on stderr; the output has an empty hour. */
static rd_history *read_history(const rd_system_cfg *sys, const snap_opts *o)
{
    /* the groups' onsets are set against it too (onset.h) */
    bool want = o->history || (o->view && (o->view->mask & (VPART_HISTORY | VPART_GROUPS)));
    if (!want || !sys)
        return NULL;
    rd_history *h = xmalloc(sizeof *h);
    char why[400];
    if (!syshist_read(sys->name, h, why, sizeof why) || why[0]) {
        char *msg = xasprintf("redrive snapshot: history: %s", why);
        err_line(msg);
        free(msg);
    }
    return h;
}

static char *render(const rd_model *m, const snap_opts *o, const rd_history *h, double now)
{
    const char *view = o->view ? o->view->name : "overview";
    if (o->view && (o->view->mask & VPART_HISTORY) && !o->json)
        return history_to_text(h, now, HIST_N / 6, o->ascii);
    bool hour = o->history || (o->view && (o->view->mask & VPART_HISTORY));
    return o->json ? model_to_json_onset(m, view, now, hour ? h : NULL, h) : model_to_text(m, view, now);
}

static int output(const rd_model *m, const snap_opts *o, const rd_system_cfg *sys)
{
    rd_history *h = read_history(sys, o);
    char *text = render(m, o, h, clock_wall());
    free(h);
    if (text && o->group && o->json)
        text = with_group(text, o);
    else if (text && o->group) {
        char *head = o->group_total >= 0
                         ? xasprintf("GROUP %s: %ld failures in the store's window\n\n%s", o->group_id, o->group_total, text)
                         : xasprintf("GROUP %s\n\n%s", o->group_id, text);
        free(text);
        text = head;
    }
    if (!text) {
        fputs("redrive snapshot: cannot render the model\n", stderr);
        return RD_EXIT_FAIL;
    }
    fputs(text, stdout);
    size_t n = strlen(text);
    if (n == 0 || text[n - 1] != '\n')
        fputc('\n', stdout);
    free(text);
    return fflush(stdout) == 0 ? RD_EXIT_OK : RD_EXIT_FAIL;
}

/* ---- --view history: the file the console keeps, no source ---- */

static int snapshot_history(const rd_opts *opts, const snap_opts *o)
{
    rd_session *ss = session_new(opts);
    rd_session_status st = session_open(ss, opts->system, NULL);
    session_print_diags(ss, 0, stderr);
    int rc = session_exit_code(st);
    if (st == SESSION_OK)
        rc = output(session_model(ss), o, session_system(ss));
    session_free(ss);
    return rc;
}

/* ---- --view fleet: every configured system at once ---- */

typedef struct fleet_run {
    rd_loop *base;
    rd_sessions *set;
    bool started;
} fleet_run;

static void on_fleet_change(void *ud, size_t i)
{
    fleet_run *r = ud;
    (void)i;
    if (r->started && sessions_settled(r->set))
        loop_break(r->base);
}

static int snapshot_fleet(const rd_opts *opts, const snap_opts *o)
{
    fleet_run r = { .base = loop_new() };
    rd_sessions_io io = { .base = r.base, .parts = SESSION_SOURCES, .on_change = on_fleet_change,
                          .change_ud = &r };
    r.set = sessions_new(opts, &io);
    sessions_print_diags(r.set, stderr);
    size_t n = sessions_count(r.set);
    if (!n) {
        sessions_free(r.set);
        loop_free(r.base);
        fputs("redrive snapshot: no system configured\n", stderr);
        return RD_EXIT_USAGE;
    }
    sessions_start(r.set);
    r.started = true;
    rd_event *deadline = loop_timer_new(r.base, on_deadline, r.base);
    loop_timer_in(deadline, SNAPSHOT_DEADLINE_S);
    if (!sessions_settled(r.set))
        loop_run(r.base);
    loop_event_free(deadline);
    bool all = true;
    for (size_t i = 0; i < n; i++)
        all &= finish_sources(session_model(sessions_at(r.set, i)));
    rd_fleet_row *rows = xcalloc(n, sizeof *rows);
    sessions_rows(r.set, clock_wall(), rows, NULL);
    char *text = o->json ? fleet_to_json(rows, n) : fleet_to_text(rows, n);
    int rc = RD_EXIT_FAIL;
    if (text) {
        fputs(text, stdout);
        if (!*text || text[strlen(text) - 1] != '\n')
            fputc('\n', stdout);
        rc = fflush(stdout) == 0 ? (all ? RD_EXIT_OK : RD_EXIT_PARTIAL) : RD_EXIT_FAIL;
    }
    free(text);
    free(rows);
    sessions_free(r.set);   /* the sources before their loop */
    loop_free(r.base);
    return rc;
}

int cli_snapshot(const rd_opts *opts, int argc, char **argv)
{
    snap_opts o = {.ascii = opts->ascii || strcmp(nl_langinfo(CODESET), "UTF-8") != 0};
    if (!parse_args(argc, argv, &o))
        return RD_EXIT_USAGE;
    if (o.view && !o.view->mask)                  /* fleet: every system */
        return snapshot_fleet(opts, &o);
    if (o.view && o.view->mask == VPART_HISTORY)  /* the console's samples: no source asked */
        return snapshot_history(opts, &o);
    snap_run r = { .base = loop_new() };
    rd_session *ss = session_new(opts);
    rd_session_io io = { .base = r.base, .parts = SESSION_SOURCES | SESSION_PROBE,
                         .on_change = on_change,
                         .change_ud = &r };
    rd_session_status st = session_open(ss, opts->system, &io);
    session_print_diags(ss, 0, stderr);
    int rc = session_exit_code(st);
    char why[600];
    if (st == SESSION_OK && o.status && !profile_status_known(session_profile(ss), o.status, why, sizeof why)) {
        fprintf(stderr, "redrive snapshot: %s\n", why);   /* never "0 rows" for a typo */
        rc = RD_EXIT_USAGE;
    } else if (st == SESSION_OK) {
        r.ss = ss;
        run_sources(&r, &o);
        rd_model *m = session_model(ss);
        if (o.group && !read_group(&r, &o)) {
            free(o.group_fp);
            session_free(ss);
            loop_free(r.base);
            return RD_EXIT_USAGE;
        }
        bool all = finish_sources(m);
        rc = output(m, &o, session_system(ss));
        if (rc == RD_EXIT_OK && !all)
            rc = RD_EXIT_PARTIAL;
    }
    free(o.group_fp);
    session_free(ss);   /* the sources before their loop */
    loop_free(r.base);
    return rc;
}
