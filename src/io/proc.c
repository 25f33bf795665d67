/* Child processes on the loop (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/xalloc.h"
#include "clock.h"
#include "loop.h"

enum { PROC_REAP_POLL_US = 10000 };

struct rd_proc {
    pid_t pid;                       /* 0 once reaped */
    int fd;                          /* stdout pipe, -1 once closed */
    struct event *rd, *timer, *reap;
    double timeout_s;
    rd_proc_cb cb;
    rd_proc_line_cb on_line;         /* proc_run_argv: each line as it arrives */
    void *ud;
    char *out;
    size_t len, cap;
    bool too_big, in_cb;
};

static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (p && n--)
        *v++ = 0;
}

void proc_status_text(int st, char *buf, size_t cap)
{
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        snprintf(buf, cap, "exited with status 127 (command not found?)");
    else if (WIFEXITED(st))
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, cap, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, cap, "stopped (wait status %d)", st);
}

static void proc_destroy(rd_proc *p)
{
    event_free(p->rd);
    event_free(p->timer);
    event_free(p->reap);
    if (p->fd >= 0)
        close(p->fd);
    if (p->out) {
        wipe(p->out, p->cap);
        free(p->out);
    }
    free(p);
}

static void proc_finish(rd_proc *p, bool ok, const char *why)
{
    event_del(p->rd);
    event_del(p->timer);
    event_del(p->reap);
    if (ok && !p->out)
        p->out = xcalloc(1, 1);
    p->in_cb = true;
    p->cb(ok, ok ? p->out : NULL, ok ? p->len : 0, ok ? NULL : why, p->ud);
    proc_destroy(p);
}

/* SIGKILL the group (the shell and whatever it started), then reap the shell. */
static void proc_kill(rd_proc *p)
{
    if (p->pid <= 0)
        return;
    kill(-p->pid, SIGKILL);
    kill(p->pid, SIGKILL);
    while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    p->pid = 0;
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    rd_proc *p = arg;
    int st = 0;
    (void)fd; (void)what;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == 0) {                    /* stdout closed, still running: look again soon */
        struct timeval tv = {0, PROC_REAP_POLL_US};
        event_add(p->reap, &tv);
        return;
    }
    p->pid = 0;
    char why[96];
    if (r < 0) {
        snprintf(why, sizeof why, "lost the child process: %s", strerror(errno));
        proc_finish(p, false, why);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        proc_status_text(st, why, sizeof why);
        proc_finish(p, false, why);
    } else if (p->too_big) {
        snprintf(why, sizeof why, "output larger than %d bytes", PROC_OUT_MAX);
        proc_finish(p, false, why);
    } else {
        proc_finish(p, true, NULL);
    }
}

static void keep(rd_proc *p, const char *buf, size_t n)
{
    if (p->too_big || p->len + n > PROC_OUT_MAX) {
        p->too_big = true;
        return;
    }
    if (p->len + n + 1 > p->cap) {
        size_t cap = (p->len + n + 1) * 2;
        char *nb = xmalloc(cap);
        if (p->out) {
            memcpy(nb, p->out, p->len);
            wipe(p->out, p->cap);
            free(p->out);
        }
        p->out = nb;
        p->cap = cap;
    }
    memcpy(p->out + p->len, buf, n);
    p->len += n;
    p->out[p->len] = '\0';
}

/* proc_run_argv: the complete lines kept so far to on_line (all of it at the end). */
static void lines_out(rd_proc *p, bool end)
{
    size_t start = 0;
    for (size_t i = 0; p->on_line && i < p->len; i++)
        if (p->out[i] == '\n') {
            p->out[i] = '\0';
            p->on_line(p->out + start, p->ud);
            start = i + 1;
        }
    if (p->on_line && end && start < p->len)
        p->on_line(p->out + start, p->ud);
    if (p->on_line && p->out && (start || end)) {
        size_t left = end ? 0 : p->len - start;
        memmove(p->out, p->out + p->len - left, left);
        p->len = left;
        p->out[left] = '\0';
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    rd_proc *p = arg;
    (void)what;
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            keep(p, buf, (size_t)n);
            lines_out(p, false);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            wipe(buf, sizeof buf);
            return;
        }
        break;                       /* EOF or error */
    }
    wipe(buf, sizeof buf);
    if (!p->too_big)
        lines_out(p, true);
    event_del(p->rd);
    close(p->fd);
    p->fd = -1;
    on_reap(-1, 0, p);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    rd_proc *p = arg;
    (void)fd; (void)what;
    proc_kill(p);
    char why[64];
    snprintf(why, sizeof why, "timed out after %.3g s (killed)", p->timeout_s);
    proc_finish(p, false, why);
}

/* Timed as callbacks of their own under the loop trace (loop.h). */
static void on_read_timed(evutil_socket_t fd, short what, void *arg)
{
    loop_call(on_read, fd, what, arg, "proc_read");
}

static void on_timeout_timed(evutil_socket_t fd, short what, void *arg)
{
    loop_call(on_timeout, fd, what, arg, "proc_timeout");
}

static void on_reap_timed(evutil_socket_t fd, short what, void *arg)
{
    loop_call(on_reap, fd, what, arg, "proc_reap");
}

/* In the child: only async-signal-safe calls until exec. argv: run directly, else
 * `sh -c command`. */
static void child_exec(const char *command, char *const argv[], int outfd)
{
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 || dup2(outfd, 1) < 0)
        _exit(126);
    closefrom(3);                    /* the app's sockets are none of the child's business */
    if (argv)
        execv(argv[0], argv);
    else
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
    _exit(127);
}

static rd_proc *proc_start(struct event_base *base, const char *command, char *const argv[],
                           double timeout_s, rd_proc_cb cb, void *ud)
{
    int fds[2];
    if (!base || !cb || pipe2(fds, O_CLOEXEC) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0)
        child_exec(command, argv, fds[1]);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return NULL;
    }
    setpgid(pid, pid);               /* also here: no window where -pid names no group */
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    rd_proc *p = xcalloc(1, sizeof *p);
    p->pid = pid;
    p->fd = fds[0];
    p->cb = cb;
    p->ud = ud;
    p->timeout_s = timeout_s > 0 ? timeout_s : 30;
    p->rd = event_new(base, p->fd, EV_READ | EV_PERSIST, on_read_timed, p);
    p->timer = evtimer_new(base, on_timeout_timed, p);
    p->reap = evtimer_new(base, on_reap_timed, p);
    struct timeval tv = clock_tv(p->timeout_s);
    event_add(p->rd, NULL);
    event_add(p->timer, &tv);
    return p;
}

rd_proc *proc_run(struct event_base *base, const char *command, double timeout_s,
                  rd_proc_cb cb, void *ud)
{
    if (!command || !*command)
        return NULL;
    return proc_start(base, command, NULL, timeout_s, cb, ud);
}

rd_proc *proc_run_argv(struct event_base *base, char *const argv[], double timeout_s,
                       rd_proc_line_cb on_line, rd_proc_cb cb, void *ud)
{
    if (!argv || !argv[0] || !on_line)
        return NULL;
    rd_proc *p = proc_start(base, NULL, argv, timeout_s, cb, ud);
    if (p)
        p->on_line = on_line;
    return p;
}

void proc_cancel(rd_proc *p)
{
    if (!p || p->in_cb)
        return;
    proc_kill(p);
    proc_destroy(p);
}

static void quiet_event_log(int severity, const char *msg)
{
    (void)severity;
    (void)msg;   /* libevent's warnings describe conditions our callbacks already report */
}

void proc_init_process(void)
{
    signal(SIGPIPE, SIG_IGN);
    event_set_log_callback(quiet_event_log);
}
