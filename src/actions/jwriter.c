/* The journal's writer thread (jwriter.h). */
#include "jwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"

typedef struct jw_job {
    struct jw_job *next;
    uint64_t ticket;
    char *path, *line, *syslog;
    rd_jwriter_done done;
    void *ud;
    bool ok;
    char why[256];
} jw_job;

enum { JW_GROUP_MAX = 128 };   /* lines written under one sync at most */
enum { JW_DONE_SLICE = 8 };    /* completions run in one loop callback at most ... */
static const double JW_DONE_SLICE_MS = 0.5;   /* ... and for this long at most */

typedef struct jw_list { jw_job *head, *tail; } jw_list;

struct rd_jwriter {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    jw_list todo, done;       /* under mu */
    jw_job *cur;              /* being written by the thread (under mu) */
    bool stop;
    int wake[2];              /* thread -> loop: completions to run */
    rd_event *ev, *more;      /* the wake pipe's event; the rest of a slice of completions */
    uint64_t next_ticket;
    size_t queued;            /* loop side: appended, completion not yet run */
    uint64_t syncs, lines;    /* under mu: fdatasync calls and lines written (jwriter_stats) */
};

static void list_push(jw_list *l, jw_job *j)
{
    j->next = NULL;
    if (l->tail)
        l->tail->next = j;
    else
        l->head = j;
    l->tail = j;
}

static jw_job *list_pop(jw_list *l)
{
    jw_job *j = l->head;
    if (j && !(l->head = j->next))
        l->tail = NULL;
    return j;
}

static void job_free(jw_job *j)
{
    free(j->path);
    free(j->line);
    free(j->syslog);
    free(j);
}

static bool same_path(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* One group commit: the jobs of the list (each a line), in order, a run of lines for one
 * path at a time: written, then one fdatasync for the run (journal_write_lines). No
 * line's completion runs before the sync that covers it: the write-ahead rule holds for
 * each line, and the lines queued while a sync ran share the next one. */
static void write_group(rd_jwriter *w, jw_job *head)
{
    const char *lines[JW_GROUP_MAX], *syslog[JW_GROUP_MAX];
    bool ok[JW_GROUP_MAX];
    char why[JW_GROUP_MAX][256];
    for (jw_job *j = head; j;) {
        jw_job *run[JW_GROUP_MAX];
        size_t n = 0;
        for (; j && n < JW_GROUP_MAX && (n == 0 || same_path(run[0]->path, j->path)); j = j->next) {
            run[n] = j;
            lines[n] = j->line;
            syslog[n] = j->syslog;
            n++;
        }
        int syncs = journal_write_lines(run[0]->path, lines, syslog, n, ok, why);
        for (size_t k = 0; k < n; k++) {
            run[k]->ok = ok[k];
            if (!ok[k])
                snprintf(run[k]->why, sizeof run[k]->why, "%s", why[k]);
        }
        pthread_mutex_lock(&w->mu);
        w->syncs += (uint64_t)syncs;
        w->lines += n;
        pthread_mutex_unlock(&w->mu);
    }
}

static void *writer_main(void *arg)
{
    rd_jwriter *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->todo.head && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        if (!w->todo.head)
            break;   /* stopped, nothing left */
        /* every line queued so far (at most JW_GROUP_MAX): one group, one sync per path */
        jw_job *head = w->todo.head, *last = head;
        for (size_t n = 1; n < JW_GROUP_MAX && last->next; n++)
            last = last->next;
        if (!(w->todo.head = last->next))
            w->todo.tail = NULL;
        last->next = NULL;
        w->cur = head;
        pthread_mutex_unlock(&w->mu);
        write_group(w, head);
        pthread_mutex_lock(&w->mu);
        w->cur = NULL;
        for (jw_job *j = head, *next; j; j = next) {
            next = j->next;
            list_push(&w->done, j);
        }
        if (!w->todo.head)
            pthread_cond_broadcast(&w->idle);
        ssize_t n = write(w->wake[1], "", 1);   /* full pipe: a wake is pending anyway */
        (void)n;
    }
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* On the loop: the completions, in the order the lines were queued. A group commit hands
 * back many at once, and each may start a request (a pending line's) or tell the UI (an
 * outcome's): at most JW_DONE_SLICE of them, or JW_DONE_SLICE_MS, run in one callback; the
 * rest run from a zero-delay timer, after the loop has looked for keys. */
static void run_completions(rd_jwriter *w)
{
    double t0 = clock_mono();
    for (int k = 0;; k++) {   /* one at a time: a callback may forget the ones after it */
        if (k >= JW_DONE_SLICE || (k > 0 && (clock_mono() - t0) * 1e3 > JW_DONE_SLICE_MS)) {
            loop_timer_in(w->more, 0);
            return;
        }
        pthread_mutex_lock(&w->mu);
        jw_job *j = list_pop(&w->done);
        pthread_mutex_unlock(&w->mu);
        if (!j)
            return;
        w->queued--;
        if (j->done)
            j->done(j->ok, j->why, j->ud);
        job_free(j);
    }
}

static void on_wake(int fd, short what, void *arg)
{
    char buf[256];
    (void)what;
    while (read(fd, buf, sizeof buf) > 0)
        ;
    run_completions(arg);
}

static void on_more(int fd, short what, void *arg)
{
    (void)fd, (void)what;
    run_completions(arg);
}

rd_jwriter *jwriter_new(rd_loop *base)
{
    rd_jwriter *w = xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->idle, NULL);
    if (pipe2(w->wake, O_NONBLOCK | O_CLOEXEC) != 0 ||
        pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        fprintf(stderr, "redrive: cannot start the journal writer: %s\n", strerror(errno));
        abort();
    }
    w->ev = loop_fd_new(base, w->wake[0], LOOP_READ | LOOP_PERSIST, on_wake, w);
    w->more = loop_timer_new(base, on_more, w);
    return w;
}

uint64_t jwriter_append(rd_jwriter *w, const char *path, const rd_journal_rec *rec,
                        rd_jwriter_done done, void *ud)
{
    jw_job *j = xcalloc(1, sizeof *j);
    j->path = path ? xstrdup(path) : NULL;
    j->line = journal_line(rec);
    j->syslog = rec->syslog ? xstrdup(rec->syslog) : NULL;
    j->done = done;
    j->ud = ud;
    j->ticket = ++w->next_ticket;
    w->queued++;
    pthread_mutex_lock(&w->mu);
    list_push(&w->todo, j);
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return j->ticket;
}

static void forget_in(jw_job *j, uint64_t ticket)
{
    for (; j; j = j->next)
        if (j->ticket == ticket)
            j->done = NULL;
}

void jwriter_forget(rd_jwriter *w, uint64_t ticket)
{
    pthread_mutex_lock(&w->mu);
    forget_in(w->todo.head, ticket);
    forget_in(w->cur, ticket);
    forget_in(w->done.head, ticket);
    pthread_mutex_unlock(&w->mu);
}

void jwriter_drain(rd_jwriter *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->todo.head || w->cur)
        pthread_cond_wait(&w->idle, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

void jwriter_stats(rd_jwriter *w, uint64_t *syncs, uint64_t *lines)
{
    pthread_mutex_lock(&w->mu);
    *syncs = w->syncs;
    *lines = w->lines;
    pthread_mutex_unlock(&w->mu);
}

size_t jwriter_queued(const rd_jwriter *w)
{
    return w->queued;
}

void jwriter_free(rd_jwriter *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);   /* the thread writes every queued line first */
    for (jw_job *j; (j = list_pop(&w->done));)
        job_free(j);
    loop_event_free(w->ev);
    loop_event_free(w->more);
    close(w->wake[0]);
    close(w->wake[1]);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
