/*
 * redrive check: a doctor for a new setup. For each system (or the one named) it resolves
 * the secret references (never printing a value), connects the store, broker and worker
 * probes through the session as the console would, asks the core who we are
 * (GET /auth/me), then prints one line per check: ✓ ok, ! warning, ✗ failed with the fix
 * (ASCII: ok / warn / FAIL). Exit 0 when nothing failed, 3 when a check failed, 2 on
 * usage or configuration errors. --json prints the same as JSON.
 */
#include "cli.h"

#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sanitize.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/loop.h"
#include "../io/secret.h"
#include "check.h"
#include "cmdtable.h"

static const double CHECK_DEADLINE_S = 8.0;
enum { CK_MAX_SECRETS = 4 };

typedef struct ck_run ck_run;

typedef struct ck_secret {
    ck_run *run;
    const char *key;            /* config key: token, password, broker_password */
    const char *ref;            /* the reference (borrowed from the config) */
    rd_secret *req;             /* in flight */
    bool done, ok;
    char why[256];
} ck_secret;

struct ck_run {
    rd_loop *base;
    rd_session *ss;
    bool started;
    ck_secret secrets[CK_MAX_SECRETS];
    size_t n_secrets, secrets_pending;
    bool who_pending, who_asked;
    rd_whoami who;
};

/* ---- waiting for the parts ---------------------------------------------------------- */

/* A source that answered has also been asked its server's version (Redis, PostgreSQL
 * and RabbitMQ say it after their first answer). */
static bool versions_known(const rd_model *m)
{
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        /* the workers' /health and SQS have no server version to wait for */
        bool server = strcmp(s->name, "workers-http") != 0 && strcmp(s->name, "sqs") != 0;
        if (server && s->state == RD_SRC_OK && !(s->facts_known & RD_FACT_VERSION))
            return false;
    }
    return true;
}

/* Every source answered, one of them still in a long first read (the Redis sweep under
 * its budget): `check` reports its progress rather than wait for the whole store. */
static bool answered_reading(const rd_model *m)
{
    bool reading = false;
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        reading |= s->progress.active;
        if (s->state == RD_SRC_CONNECTING && !s->progress.active)
            return false;
    }
    return reading;
}

static void maybe_done(ck_run *r)
{
    rd_sources *src = session_sources(r->ss);
    const rd_model *m = session_model(r->ss);
    if (!r->started || r->secrets_pending || r->who_pending)
        return;
    if (src && (!(session_settled(r->ss) || answered_reading(m)) || !versions_known(m)))
        return;
    loop_break(r->base);
}

static void on_change(void *ud) { maybe_done(ud); }

static void on_secret(bool ok, const char *secret, const char *why, void *ud)
{
    ck_secret *s = ud;
    (void)secret;               /* only whether it resolves: the value is never kept */
    s->req = NULL;
    s->done = true;
    s->ok = ok;
    snprintf(s->why, sizeof s->why, "%s", ok || !why ? "" : why);
    s->run->secrets_pending--;
    maybe_done(s->run);
}

static void add_secret(ck_run *r, const char *key, const char *ref)
{
    if (!ref || !*ref || r->n_secrets >= CK_MAX_SECRETS)
        return;
    ck_secret *s = &r->secrets[r->n_secrets++];
    *s = (ck_secret){.run = r, .key = key, .ref = ref};
    r->secrets_pending++;
    s->req = secret_resolve(r->base, ref, 0, 30, on_secret, s);
}

static void on_whoami(const rd_whoami *w, void *ud)
{
    ck_run *r = ud;
    r->who = *w;
    r->who_pending = false;
    maybe_done(r);
}

static void on_deadline(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    loop_break(arg);
}

static void run_parts(ck_run *r, const rd_system_cfg *cfg)
{
    rd_actor *a = session_actor(r->ss);
    if (!a || !actor_read_only(a)) {   /* read-only never authenticates to the core */
        add_secret(r, "token", cfg->core.token);
        add_secret(r, "password", cfg->core.password);
    }
    add_secret(r, "broker_password", cfg->broker.password);
    session_start(r->ss);
    r->who_asked = r->who_pending = a && actor_whoami(a, on_whoami, r);
    r->started = true;
    rd_event *deadline = loop_timer_new(r->base, on_deadline, r->base);
    loop_timer_in(deadline, CHECK_DEADLINE_S);
    maybe_done(r);
    loop_run(r->base);
    loop_event_free(deadline);
    for (size_t i = 0; i < r->n_secrets; i++)
        secret_cancel(r->secrets[i].req);   /* a cmd: still running after the deadline */
}

/* ---- one system --------------------------------------------------------------------- */

static void report_secrets(ck_report *rep, const ck_run *r)
{
    for (size_t i = 0; i < r->n_secrets; i++) {
        const ck_secret *s = &r->secrets[i];
        /* a cmd: reference is a command line: name its kind only */
        const char *shown = strncmp(s->ref, "cmd:", 4) == 0 ? "cmd:…" : s->ref;
        if (s->ok)
            ck_add(rep, CK_OK, s->key, NULL, "%s resolves", shown);
        else if (!s->done)
            ck_add(rep, CK_FAIL, s->key, "make the command finish within 30 s",
                   "%s did not finish in time", shown);
        else
            ck_add(rep, CK_FAIL, s->key, strncmp(s->ref, "env:", 4) == 0
                   ? "export the variable in redrive's environment"
                   : strncmp(s->ref, "file:", 5) == 0
                   ? "create the file, owned by you, mode 0600" : "fix the command",
                   "%s: %s", shown, s->why);
    }
}

static void check_system(ck_run *r, ck_report *rep)
{
    const rd_system_cfg *cfg = session_system(r->ss);
    run_parts(r, cfg);
    rd_model *m = session_model(r->ss);
    double now = clock_wall();
    for (size_t i = 0; i < m->sources.n; i++)   /* never answered: down, with why (a first
                                                   sweep under way has answered) */
        if (m->sources.items[i].state == RD_SRC_CONNECTING && !m->sources.items[i].progress.active)
            model_source_fail(m, m->sources.items[i].name, "no answer within 8 s", now);
    report_secrets(rep, r);
    ck_report_store(rep, cfg, session_profile(r->ss), m);
    ck_report_broker(rep, cfg, session_profile(r->ss), m);
    ck_report_sqs(rep, cfg, m);
    ck_report_core(rep, cfg, session_actor(r->ss), r->who_asked ? &r->who : NULL);
}

/* ---- arguments and output ----------------------------------------------------------- */

typedef struct ck_opts {
    bool json, ascii;
    const char *system;
} ck_opts;

static const char check_usage[] =
    "usage: redrive [--config F] check [--system NAME] [--json] [--ascii]\n";

static bool parse_args(int argc, char **argv, const rd_opts *opts, ck_opts *o)
{
    o->system = opts->system;
    o->ascii = opts->ascii;
    for (int i = 1; i < argc; i++) {
        if (cli_option_unknown(CMD_CHECK, argv[i], "redrive check")) {   /* the table decides */
            fputs(check_usage, stderr);
            return false;
        }
        if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if (strcmp(argv[i], "--ascii") == 0) {
            o->ascii = true;
        } else if (strcmp(argv[i], "--system") == 0 && i + 1 < argc) {
            o->system = argv[++i];
        } else if (strncmp(argv[i], "--system=", 9) == 0) {
            o->system = argv[i] + 9;
        } else {
            char *clean = sanitize_str(argv[i], 0);
            fprintf(stderr, "redrive check: unknown argument '%.100s'\n%s", clean, check_usage);
            free(clean);
            return false;
        }
    }
    /* ✓ and ✗ only where the locale can show them */
    if (!o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
        o->ascii = true;
    return true;
}

/* The DNS line is about this process's libcurl, once for every system. */
static void report_global(ck_report *g)
{
    if (http_async_dns())
        ck_add(g, CK_OK, "dns", NULL, "libcurl resolves names without blocking");
    else
        ck_add(g, CK_WARN, "dns", "install a libcurl built with the threaded resolver",
               "libcurl has no asynchronous resolver: a slow name lookup stalls the console");
}

/* Opens, checks and closes one system; false when the session could not open it. */
static bool check_one(rd_session *ss, const char *name, ck_report *rep)
{
    ck_run r = {.base = loop_new(), .ss = ss};
    rd_session_io io = {.base = r.base, .parts = SESSION_SOURCES | SESSION_ACTOR,
                        .on_change = on_change, .change_ud = &r};
    rd_session_status st = session_open(ss, name, &io);
    bool ok = st == SESSION_OK;
    if (ok)
        check_system(&r, rep);
    session_close(ss);   /* the parts before their loop */
    loop_free(r.base);
    return ok;
}

int cli_check(const rd_opts *opts, int argc, char **argv)
{
    ck_opts o = {0};
    if (!parse_args(argc, argv, opts, &o))
        return RD_EXIT_USAGE;
    rd_session *ss = session_new(opts);
    ck_list list = {0};
    int rc = RD_EXIT_OK;
    if (!session_has_systems(ss) || (o.system && !session_find(ss, o.system))) {
        rd_session_io none = {0};
        session_open(ss, o.system, &none);   /* says why, as a diagnostic */
        rc = RD_EXIT_USAGE;
    }
    /* A system whose config section has problems gets them as its ✗ lines; the others
     * are still checked, and the exit status says "configuration" (2). */
    bool config_bad = false;
    for (size_t i = 0; rc == RD_EXIT_OK && i < session_system_count(ss); i++) {
        const rd_system_cfg *sys = session_system_at(ss, i);
        if (o.system && strcmp(o.system, sys->name) != 0)
            continue;
        ck_report *rep = ck_list_add(&list, sys->name, sys->profile);
        size_t before = session_diags(ss)->n;
        if (!check_one(ss, sys->name, rep)) {
            config_bad = true;
            const rd_diags *d = session_diags(ss);
            for (size_t k = before; k < d->n; k++)
                ck_add(rep, CK_FAIL, "config", "correct that line of the config", "%s",
                       d->msgs[k]);
        }
    }
    session_print_diags(ss, 0, stderr);
    if (rc == RD_EXIT_OK) {
        report_global(&list.global);
        rc = ck_print(&list, o.json, o.ascii, session_config_path(ss), stdout);
        if (config_bad)
            rc = RD_EXIT_USAGE;
    }
    ck_list_free(&list);
    session_free(ss);
    return rc;
}
