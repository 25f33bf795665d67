/* The save jobs' writer thread (bgwrite.h). */
#include "bgwrite.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"

typedef struct bg_job {
    struct bg_job *next;
    rd_bgwrite_fn run;
    rd_bgwrite_free free_arg;
    void *arg;
} bg_job;

struct rd_bgwrite {
    pthread_t thread;
    bool started, stop, running;   /* under mu but started (loop only) */
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    bg_job *head, *tail;           /* under mu */
    bool failed;                   /* under mu: why holds a failure not yet handed over */
    char why[300];
};

static void *writer_main(void *arg)
{
    rd_bgwrite *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        bg_job *j = w->head;
        if (!j)
            break;   /* stopped, nothing left */
        if (!(w->head = j->next))
            w->tail = NULL;
        w->running = true;
        pthread_mutex_unlock(&w->mu);
        char why[300] = "";
        bool ok = j->run(j->arg, why, sizeof why);
        if (j->free_arg)
            j->free_arg(j->arg);
        free(j);
        pthread_mutex_lock(&w->mu);
        w->running = false;
        if (!ok) {
            w->failed = true;
            snprintf(w->why, sizeof w->why, "%s", why[0] ? why : "write failed");
        }
        if (!w->head)
            pthread_cond_broadcast(&w->idle);
    }
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

rd_bgwrite *bgwrite_new(void)
{
    rd_bgwrite *w = xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->idle, NULL);
    return w;
}

/* The thread takes no signal: they stay the loop's (libevent's handlers, SIGCHLD). */
static bool start(rd_bgwrite *w, char *why, size_t whycap)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&w->thread, NULL, writer_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        snprintf(why, whycap, "cannot start the writer thread: %s", strerror(err));
        return false;
    }
    w->started = true;
    return true;
}

bool bgwrite_queue(rd_bgwrite *w, rd_bgwrite_fn run, rd_bgwrite_free free_arg, void *arg,
                   char *why, size_t whycap)
{
    if (!w->started && !start(w, why, whycap)) {
        if (free_arg)
            free_arg(arg);
        return false;
    }
    bg_job *j = xcalloc(1, sizeof *j);
    *j = (bg_job){.run = run, .free_arg = free_arg, .arg = arg};
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return true;
}

bool bgwrite_busy(rd_bgwrite *w)
{
    pthread_mutex_lock(&w->mu);
    bool busy = w->head || w->running;
    pthread_mutex_unlock(&w->mu);
    return busy;
}

bool bgwrite_failed(rd_bgwrite *w, char *why, size_t whycap)
{
    pthread_mutex_lock(&w->mu);
    bool failed = w->failed;
    if (failed)
        snprintf(why, whycap, "%s", w->why);
    w->failed = false;
    pthread_mutex_unlock(&w->mu);
    return failed;
}

void bgwrite_drain(rd_bgwrite *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->head || w->running)
        pthread_cond_wait(&w->idle, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

void bgwrite_free(rd_bgwrite *w)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);   /* the thread runs every queued job first */
    }
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
