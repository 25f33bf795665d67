/* Secret references and the asynchronous command runner (see secret.h). */
#include "secret.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/xalloc.h"

#define CMD_OUT_MAX ((size_t)64 << 10)
#define SECRET_FILE_MAX ((size_t)64 << 10)

struct rd_cmd {
    struct event_base *base;
    pid_t pid;
    int fd;
    struct event *rd, *timer, *reap;
    rd_cmd_cb cb;
    void *ud;
    char *out;
    size_t len, cap;
    bool eof, too_big, in_cb, cancelled;
    int status;
};

void secret_wipe(void *p, size_t n)
{
    if (!p)
        return;
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

void secret_free(char *s)
{
    if (!s)
        return;
    secret_wipe(s, strlen(s));
    free(s);
}

static char *trim_secret(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
                 s[n - 1] == '\t'))
        s[--n] = '\0';
    size_t lead = strspn(s, " \t\r\n");
    if (lead)
        memmove(s, s + lead, n - lead + 1);
    return s;
}

static void cmd_destroy(rd_cmd *c)
{
    if (c->rd)
        event_free(c->rd);
    if (c->timer)
        event_free(c->timer);
    if (c->reap)
        event_free(c->reap);
    if (c->fd >= 0)
        close(c->fd);
    if (c->out) {
        secret_wipe(c->out, c->cap);
        free(c->out);
    }
    free(c);
}

static void cmd_finish(rd_cmd *c, bool ok, const char *why)
{
    event_del(c->rd);
    event_del(c->timer);
    event_del(c->reap);
    if (ok) {
        if (!c->out)
            c->out = xcalloc(1, 1);
        trim_secret(c->out);
    }
    c->in_cb = true;
    c->cb(ok, ok ? c->out : NULL, ok ? NULL : why, c->ud);
    c->in_cb = false;
    cmd_destroy(c);
}

static void cmd_kill(rd_cmd *c)
{
    if (c->pid > 0) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
        c->pid = 0;
    }
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    rd_cmd *c = arg;
    int st = 0;
    (void)fd; (void)what;
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r == 0) {
        struct timeval tv = {0, 20000};
        event_add(c->reap, &tv);
        return;
    }
    c->pid = 0;
    char why[96];
    if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (r > 0 && WIFEXITED(st))
            snprintf(why, sizeof why, "command exited with status %d", WEXITSTATUS(st));
        else
            snprintf(why, sizeof why, "command did not exit normally");
        cmd_finish(c, false, why);
    } else if (c->too_big) {
        cmd_finish(c, false, "command output too large");
    } else if (!c->out || !trim_secret(c->out)[0]) {
        cmd_finish(c, false, "command printed nothing");
    } else {
        cmd_finish(c, true, NULL);
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    rd_cmd *c = arg;
    (void)what;
    for (;;) {
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            if (c->len + (size_t)n > CMD_OUT_MAX) {
                c->too_big = true;
                continue;
            }
            if (c->len + (size_t)n + 1 > c->cap) {
                size_t cap = (c->len + (size_t)n + 1) * 2;
                char *nb = xmalloc(cap);
                if (c->out) {
                    memcpy(nb, c->out, c->len);
                    secret_wipe(c->out, c->cap);
                    free(c->out);
                }
                c->out = nb;
                c->cap = cap;
            }
            memcpy(c->out + c->len, buf, (size_t)n);
            c->len += (size_t)n;
            c->out[c->len] = '\0';
            secret_wipe(buf, sizeof buf);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        break;   /* EOF or error */
    }
    event_del(c->rd);
    close(c->fd);
    c->fd = -1;
    on_reap(-1, 0, c);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    rd_cmd *c = arg;
    (void)fd; (void)what;
    cmd_kill(c);
    cmd_finish(c, false, "command timed out");
}

static pid_t spawn(const char *command, int outfd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 2);
    }
    dup2(outfd, 1);
    execl("/bin/sh", "sh", "-c", command, (char *)NULL);
    _exit(127);
}

rd_cmd *cmd_run(struct event_base *base, const char *command, double timeout_s,
                rd_cmd_cb cb, void *ud)
{
    int p[2];
    if (!command || !*command || pipe2(p, O_CLOEXEC) != 0)
        return NULL;
    pid_t pid = spawn(command, p[1]);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return NULL;
    }
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    rd_cmd *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->pid = pid;
    c->fd = p[0];
    c->cb = cb;
    c->ud = ud;
    c->rd = event_new(base, c->fd, EV_READ | EV_PERSIST, on_read, c);
    c->timer = evtimer_new(base, on_timeout, c);
    c->reap = evtimer_new(base, on_reap, c);
    event_add(c->rd, NULL);
    double t = timeout_s > 0 ? timeout_s : 30;
    struct timeval tv = {(time_t)t, (suseconds_t)((t - (double)(time_t)t) * 1e6)};
    event_add(c->timer, &tv);
    return c;
}

void cmd_cancel(rd_cmd *c)
{
    if (!c || c->in_cb)
        return;
    cmd_kill(c);
    cmd_destroy(c);
}

static char *expand_home(const char *path)
{
    if (path[0] == '~' && path[1] == '/') {
        const char *home = getenv("HOME");
        return xasprintf("%s%s", home ? home : "", path + 1);
    }
    return xstrdup(path);
}

static char *read_secret_file(const char *ref, char *why, size_t whycap)
{
    char *path = expand_home(ref);
    char *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(why, whycap, "cannot open secret file %s: %s", path, strerror(errno));
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whycap, "secret file %s is not a regular file", path);
    } else if (st.st_mode & 077) {
        snprintf(why, whycap, "secret file %s is group/world accessible (mode %03o): "
                 "chmod 600 it", path, (unsigned)(st.st_mode & 0777));
    } else {
        size_t cap = SECRET_FILE_MAX, len = 0;
        out = xmalloc(cap + 1);
        ssize_t n;
        while (len < cap && (n = read(fd, out + len, cap - len)) > 0)
            len += (size_t)n;
        out[len] = '\0';
        trim_secret(out);
        if (!out[0]) {
            snprintf(why, whycap, "secret file %s is empty", path);
            secret_free(out);
            out = NULL;
        }
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return out;
}

char *secret_resolve_now(const char *ref, bool *is_cmd, const char **cmd,
                         char *why, size_t whycap)
{
    *is_cmd = false;
    *cmd = NULL;
    if (!ref || !*ref) {
        snprintf(why, whycap, "no secret configured");
        return NULL;
    }
    if (strncmp(ref, "env:", 4) == 0) {
        const char *v = getenv(ref + 4);
        if (!v || !*v) {
            snprintf(why, whycap, "environment variable %s is not set", ref + 4);
            return NULL;
        }
        return trim_secret(xstrdup(v));
    }
    if (strncmp(ref, "file:", 5) == 0)
        return read_secret_file(ref + 5, why, whycap);
    if (strncmp(ref, "cmd:", 4) == 0) {
        *is_cmd = true;
        *cmd = ref + 4;
        return NULL;
    }
    snprintf(why, whycap, "a secret must be a reference (env:NAME, file:PATH or cmd:COMMAND)");
    return NULL;
}
