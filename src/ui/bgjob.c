/* Work off the console's loop (bgjob.h). */
#include "bgjob.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/xalloc.h"

typedef struct job {
    struct job *next;
    ui_bgjob_run run;
    ui_bgjob_done done;
    void *arg;
} job;

struct ui_bgjobs {
    rd_loop *base;
    rd_event *ev;
    int wake[2];
    pthread_t th;
    bool started, stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *todo, *todo_tail, *done;   /* done: newest first, reversed when taken */
    int busy;                        /* queued or running */
};

static void *worker(void *ud)
{
    ui_bgjobs *j = ud;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->todo && !j->stop)
            pthread_cond_wait(&j->cv, &j->mu);
        if (!j->todo)         /* stopped, and every job queued has run */
            break;
        job *x = j->todo;
        j->todo = x->next;
        if (!j->todo)
            j->todo_tail = NULL;
        pthread_mutex_unlock(&j->mu);
        x->run(x->arg);
        pthread_mutex_lock(&j->mu);
        x->next = j->done;
        j->done = x;
        ssize_t n = write(j->wake[1], "", 1);   /* a full pipe: a wake is pending anyway */
        (void)n;
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static void on_wake(int fd, short what, void *ud)
{
    ui_bgjobs *j = ud;
    char buf[64];
    (void)what;
    while (read(fd, buf, sizeof buf) > 0) {
    }
    pthread_mutex_lock(&j->mu);
    job *d = j->done, *rev = NULL;
    j->done = NULL;
    pthread_mutex_unlock(&j->mu);
    while (d) {                       /* in the order they were queued */
        job *n = d->next;
        d->next = rev;
        rev = d;
        d = n;
    }
    while (rev) {
        job *n = rev->next;
        j->busy--;
        rev->done(rev->arg, false);
        free(rev);
        rev = n;
    }
}

ui_bgjobs *bgjobs_new(rd_loop *base)
{
    ui_bgjobs *j = xcalloc(1, sizeof *j);
    j->base = base;
    j->wake[0] = j->wake[1] = -1;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    if (base && pipe2(j->wake, O_NONBLOCK | O_CLOEXEC) == 0)
        j->ev = loop_fd_new(base, j->wake[0], LOOP_READ | LOOP_PERSIST, on_wake, j);
    return j;
}

void bgjobs_queue(ui_bgjobs *j, ui_bgjob_run run, ui_bgjob_done done, void *arg)
{
    if (!j->ev || (!j->started && pthread_create(&j->th, NULL, worker, j) != 0)) {
        run(arg);                     /* no loop (headless) or no thread: here and now */
        done(arg, false);
        return;
    }
    j->started = true;
    job *x = xcalloc(1, sizeof *x);
    *x = (job){.run = run, .done = done, .arg = arg};
    pthread_mutex_lock(&j->mu);
    if (j->todo_tail)
        j->todo_tail->next = x;
    else
        j->todo = x;
    j->todo_tail = x;
    j->busy++;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

bool bgjobs_busy(ui_bgjobs *j) { return j && j->busy > 0; }

static void cancel_all(job *x)
{
    while (x) {
        job *n = x->next;
        x->done(x->arg, true);
        free(x);
        x = n;
    }
}

void bgjobs_free(ui_bgjobs *j)
{
    if (!j)
        return;
    if (j->started) {
        pthread_mutex_lock(&j->mu);
        j->stop = true;
        pthread_cond_signal(&j->cv);
        pthread_mutex_unlock(&j->mu);
        pthread_join(j->th, NULL);
    }
    cancel_all(j->done);   /* ran, never handed back: its done sees cancelled */
    cancel_all(j->todo);
    loop_event_free(j->ev);
    if (j->wake[0] >= 0)
        close(j->wake[0]);
    if (j->wake[1] >= 0)
        close(j->wake[1]);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}
