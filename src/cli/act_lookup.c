/* What every action command shares, below them (act.c, act_select.c, act_dlq.c, batch.c):
 * running the sources until they settle and reading the model as the console does, the
 * guards' judgement and what they say, the terminal's questions and the results printed. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "../actions/actions.h"
#include "../actions/journal.h"
#include "../core/drain.h"
#include "../core/groups.h"
#include "../core/guard.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/loop.h"
#include "act_priv.h"

static const double LOOKUP_DEADLINE_S = 8.0;
enum { LOOP_JOURNAL_TAIL = 500 };     /* as the console reads it */

void err_clean(unsigned san, const char *fmt_prefix, const char *msg)
{
    char *c = sanitize_str(msg, san);
    fprintf(stderr, "%s%s\n", fmt_prefix, c);
    free(c);
}

void act_on_change(void *ud)
{
    lookup_run *l = ud;
    /* only while looking: the sources keep polling afterwards, during the action's loop */
    if (l->looking && session_settled(l->ss) && session_idle(l->ss))
        loop_break(l->base);
}

static void on_lookup_deadline(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    loop_break(arg);
}

/* Runs the sources until they settle (or the deadline); jump_id: the executions page
 * that starts at it (session_jump), NULL the first pages. The model read as the console
 * reads it. */
const rd_model *lookup_settle(lookup_run *l, const char *jump_id)
{
    if (!l->started) {
        l->started = true;
        session_start(l->ss);
    }
    if (jump_id)
        session_jump(l->ss, jump_id);
    rd_event *deadline = loop_timer_new(l->base, on_lookup_deadline, l->base);
    loop_timer_in(deadline, LOOKUP_DEADLINE_S);
    l->looking = true;
    loop_run(l->base);
    l->looking = false;
    loop_event_free(deadline);
    return session_model(l->ss);
}

/* The first source that failed: true with "name: error" in why. */
bool lookup_failed(const rd_model *m, char *why, size_t cap)
{
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].state != RD_SRC_OK && m->sources.items[i].error[0]) {
            snprintf(why, cap, "%s: %s", m->sources.items[i].name, m->sources.items[i].error);
            return true;
        }
    return false;
}

bool lookup_page_ok(const rd_model *m, rd_session *ss, char *why, size_t cap)
{
    if (lookup_failed(m, why, cap))
        return false;
    if (session_idle(ss))
        return true;
    snprintf(why, cap, "the store did not answer in time");
    return false;
}

/* Execution `id` read as the console reads it. Points into the session's model (valid
 * until the loop runs again), or NULL with why ("not in the store" when it is not). */
static const rd_execution *lookup_exec(lookup_run *l, const char *id, char *why, size_t cap)
{
    const rd_model *m = lookup_settle(l, id);
    for (size_t i = 0; i < m->execs.n; i++) {
        const rd_execution *e = &m->execs.items[i];
        if (e->id && strcasecmp(e->id, id) == 0)
            return e;
    }
    if (!lookup_failed(m, why, cap))
        snprintf(why, cap, "not in the store");
    return NULL;
}

/* The step's task (lookup_exec). Allocated, or NULL with why. */
char *lookup_parent(lookup_run *l, const char *id, char *why, size_t cap)
{
    char w[300];
    const rd_execution *e = lookup_exec(l, id, w, sizeof w);
    if (e && e->parent_id)
        return xstrdup(e->parent_id);
    if (!e && strcmp(w, "not in the store") != 0)
        snprintf(why, cap, "cannot find its task: %s", w);
    else
        snprintf(why, cap, "no such step in the store (or give TASK_UUID/STEP_UUID)");
    return NULL;
}

/* Target x judged from its row e (the fingerprint and attempt go into the journal with
 * the retry), its loop count against this system's manual retries in the journal. */
void act_guard_judge(const rd_execution *e, rd_target *x, const rd_retry_record *recs, size_t nrec,
                     rd_guard_item *it, char *why, size_t cap, char **fp)
{
    if (e->fingerprint)
        x->fp = *fp = xstrdup(e->fingerprint);
    x->attempt = e->attempt;
    it->elig = e->elig.verdict;
    snprintf(why, cap, "%s", e->elig.why);
    it->loops = loop_count(e, recs, nrec);
}

/* What the guard knows of target x: its verdict from the store, judged (act_guard_judge).
 * *down: the store failed once (no more waiting on it). */
void act_guard_read(lookup_run *l, rd_target *x, const rd_retry_record *recs, size_t nrec,
                    rd_guard_item *it, char *why, size_t cap, char **fp, char *down)
{
    char w[400];
    const rd_execution *e = down[0] ? NULL : lookup_exec(l, x->id, w, sizeof w);
    if (!e && !down[0] && strcmp(w, "not in the store") != 0)
        snprintf(down, 400, "%s", w);
    if (!e) {
        it->elig = down[0] ? RD_ELIG_UNKNOWN : RD_ELIG_NO;
        if (down[0])
            snprintf(why, cap, "eligibility unknown: cannot read it (%.300s)", down);
        else
            snprintf(why, cap, "no such execution in the store");
        return;
    }
    act_guard_judge(e, x, recs, nrec, it, why, cap, fp);
}

/* The line for a target the guard holds back, with the option that sends it. */
void act_guard_say(const rd_guard_item *it, unsigned san)
{
    char line[700], item[560];
    if (guard_kind(it) == GUARD_LOOP)
        snprintf(line, sizeof line, "%.100s: manual retry #%d of the same failure (it failed again the same way "
                 "after %d manual retr%s): skipped; --override-loop retries it anyway", it->id, it->loops + 1,
                 it->loops, it->loops == 1 ? "y" : "ies");
    else {
        guard_item_line(it, item, sizeof item);
        snprintf(line, sizeof line, "%s; --force sends it anyway", item);
    }
    err_clean(san, "redrive: ", line);
}

/* This system's manual retries the core accepted, from the journal's tail (the retry-loop
 * breaker's memory, groups.h): *je owns the strings. */
rd_retry_record *act_loop_records(rd_session *ss, rd_journal_entry **je, size_t *nje,
                                  size_t *nrec, unsigned san)
{
    char why[400];
    *je = NULL;
    *nje = 0;
    char *path = session_journal_path();
    if (path && !journal_read_tail(path, LOOP_JOURNAL_TAIL, je, nje, why, sizeof why))
        err_clean(san, "redrive: journal unreadable, no retry-loop check: ", why);
    free(path);
    const rd_system_cfg *sys = session_system(ss);
    return journal_retries(*je, *nje, sys ? sys->name : NULL, nrec);
}

bool read_line_tty(FILE *in, char *buf, size_t cap, bool echo)
{
    struct termios old, raw;
    int fd = fileno(in);
    bool restore = false;
    if (!echo && tcgetattr(fd, &old) == 0) {
        raw = old;
        raw.c_lflag &= ~(tcflag_t)ECHO;
        restore = tcsetattr(fd, TCSAFLUSH, &raw) == 0;
    }
    bool ok = fgets(buf, (int)cap, in) != NULL;
    if (restore) {
        tcsetattr(fd, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

int act_must_ask(const act_opts *o)
{
    if (o->opts.yes)
        return RD_EXIT_OK;
    if (!isatty(STDIN_FILENO)) {
        fprintf(stderr, "redrive: stdin is not a terminal: refusing to %s without --yes\n",
                action_name(o->kind));
        return RD_EXIT_USAGE;
    }
    return -1;
}

void act_on_password(rd_actor *a, const char *prompt, void *ud)
{
    (void)ud;
    FILE *tty = fopen("/dev/tty", "r+");
    if (!tty) {
        actor_supply_password(a, NULL);
        return;
    }
    fputs(prompt, stderr);
    char pw[512];
    bool ok = read_line_tty(tty, pw, sizeof pw, false);
    fclose(tty);
    actor_supply_password(a, ok ? pw : NULL);
    memset(pw, 0, sizeof pw);
}

void act_print_result(const rd_result *r, unsigned san)
{
    char line[640], http[40];
    /* no HTTP status: the request never left (refused here, unauthorized, unreachable,
     * aborted) or left and got no answer (maybe applied, unknown) */
    if (r->http_status)
        snprintf(http, sizeof http, "HTTP %ld", r->http_status);
    else
        snprintf(http, sizeof http, "%s", r->code == RD_RES_MAYBE_APPLIED ||
                 r->code == RD_RES_UNKNOWN ? "no answer" : "not sent");
    snprintf(line, sizeof line, "%s%s%s: %s: %s (%s, key %s)",
             r->parent ? r->parent : "", r->parent ? "/" : "", r->id, result_code_name(r->code),
             r->message, http, r->idem_key[0] ? r->idem_key : "-");
    char *c = sanitize_str(line, san);
    fprintf(stdout, "%s\n", c);
    fflush(stdout);
    free(c);
}

bool act_parse_rate(const char *s, double *out)
{
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || !(v > 0) || v > 1000)
        return false;
    *out = v;
    return true;
}

bool act_parse_concurrency(const char *s, int *out)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end || v < 1 || v > BATCHRUN_CONCURRENCY_MAX)
        return false;
    *out = (int)v;
    return true;
}

static void fmt_secs(double s, char *out, size_t cap)
{
    long v = (long)(s + 0.5);
    if (v >= 3600)
        snprintf(out, cap, "%ldh%02ldm", v / 3600, v / 60 % 60);
    else if (v >= 60)
        snprintf(out, cap, "%ldm%02lds", v / 60, v % 60);
    else
        snprintf(out, cap, "%lds", v);
}

void act_pace_line(size_t n, double rate, int concurrency, char *out, size_t cap)
{
    char eta[32];
    fmt_secs(rate > 0 ? (double)n / rate : 0, eta, sizeof eta);
    snprintf(out, cap, "rate %g/s, %d in flight at most, ETA %s (at the rate, if the core keeps "
             "up)", rate, concurrency, eta);
}
