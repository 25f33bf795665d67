/* The secret resolver: env:, file:, cmd: and literals (see secret.h). */
#include "secret.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/xalloc.h"
#include "proc.h"

enum { SECRET_CMD_DEFAULT_S = 30 };

struct rd_secret {
    rd_proc *proc;                   /* cmd: running */
    struct event *deliver;           /* env:/file:/errors: answered from the loop */
    char *value;                     /* resolved value awaiting delivery */
    char why[300];
    rd_secret_cb cb;
    void *ud;
    bool in_cb;
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

/* Surrounding whitespace off a command's output or a variable, in place. */
static char *trim_output(char *s)
{
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1]))
        s[--n] = '\0';
    size_t lead = strspn(s, " \t\r\n");
    if (lead)
        memmove(s, s + lead, n - lead + 1);
    return s;
}

static char *expand_home(const char *path)
{
    if (path[0] == '~' && path[1] == '/') {
        const char *home = getenv("HOME");
        return xasprintf("%s%s", home ? home : "", path + 1);
    }
    return xstrdup(path);
}

static char *read_fd(int fd, const char *path, char *why, size_t whycap)
{
    char *out = xmalloc(SECRET_FILE_MAX + 2);
    size_t len = 0;
    ssize_t n = 0;
    while (len <= SECRET_FILE_MAX &&
           ((n = read(fd, out + len, SECRET_FILE_MAX + 1 - len)) > 0 ||
            (n < 0 && errno == EINTR)))
        len += n > 0 ? (size_t)n : 0;
    out[len] = '\0';
    if (n < 0) {
        snprintf(why, whycap, "cannot read secret file %s: %s", path, strerror(errno));
        goto refuse;
    }
    if (len > SECRET_FILE_MAX) {     /* grew after the fstat */
        snprintf(why, whycap, "secret file %s is larger than %d bytes", path,
                 SECRET_FILE_MAX);
        goto refuse;
    }
    if (len && out[len - 1] == '\n') {                /* one trailing newline */
        out[--len] = '\0';
        if (len && out[len - 1] == '\r')
            out[--len] = '\0';
    }
    if (len == 0) {
        snprintf(why, whycap, "secret file %s is empty", path);
        goto refuse;
    }
    if (strlen(out) != len) {
        snprintf(why, whycap, "secret file %s contains a NUL byte", path);
        goto refuse;
    }
    return out;
refuse:
    secret_wipe(out, SECRET_FILE_MAX + 2);
    free(out);
    return NULL;
}

static char *read_secret_file(const char *ref, char *why, size_t whycap)
{
    char *path = expand_home(ref);
    char *out = NULL;
    struct stat st;
    /* opened without blocking on a FIFO or adopting a terminal, checked on the fd */
    int fd = fsperm_open(path, O_RDONLY, 0, "secret file", FSP_REGULAR | FSP_PRIVATE, &st,
                         why, whycap);
    if (fd >= 0 && st.st_size > SECRET_FILE_MAX)
        snprintf(why, whycap, "secret file %s is larger than %d bytes", path, SECRET_FILE_MAX);
    else if (fd >= 0)
        out = read_fd(fd, path, why, whycap);
    if (fd >= 0)
        close(fd);
    free(path);
    return out;
}

char *secret_resolve_now_flags(const char *ref, unsigned flags, bool *is_cmd,
                               const char **cmd, char *why, size_t whycap)
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
            snprintf(why, whycap, "environment variable %s is %s", ref + 4,
                     v ? "empty" : "not set");
            return NULL;
        }
        char *out = trim_output(xstrdup(v));
        if (!out[0]) {
            snprintf(why, whycap, "environment variable %s is blank", ref + 4);
            secret_free(out);
            return NULL;
        }
        return out;
    }
    if (strncmp(ref, "file:", 5) == 0)
        return read_secret_file(ref + 5, why, whycap);
    if (strncmp(ref, "cmd:", 4) == 0) {
        *is_cmd = true;
        *cmd = ref + 4;
        return NULL;
    }
    if (flags & SECRET_LITERAL_OK)
        return xstrdup(ref);
    snprintf(why, whycap, "a secret must be a reference (env:NAME, file:PATH or cmd:COMMAND)");
    return NULL;
}

char *secret_resolve_now(const char *ref, bool *is_cmd, const char **cmd,
                         char *why, size_t whycap)
{
    return secret_resolve_now_flags(ref, 0, is_cmd, cmd, why, whycap);
}

/* ---- asynchronous resolution ---------------------------------------------------------- */

static void secret_destroy(rd_secret *s)
{
    if (s->deliver)
        event_free(s->deliver);
    secret_free(s->value);
    free(s);
}

static void answer(rd_secret *s, bool ok, const char *value, const char *why)
{
    s->in_cb = true;
    s->cb(ok, ok ? value : NULL, ok ? NULL : why, s->ud);
    secret_destroy(s);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
    rd_secret *s = arg;
    (void)fd; (void)what;
    answer(s, s->value != NULL, s->value, s->why);
}

static void on_cmd(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    rd_secret *s = ud;
    s->proc = NULL;                  /* finished: the runner frees itself */
    if (!ok) {
        snprintf(s->why, sizeof s->why, "command %s", why);
        answer(s, false, NULL, s->why);
        return;
    }
    char *v = xstrndup(out, len);
    if (strlen(v) != len)
        snprintf(s->why, sizeof s->why, "command printed a NUL byte");
    else if (!trim_output(v)[0])
        snprintf(s->why, sizeof s->why, "command printed nothing");
    else {
        s->value = v;
        answer(s, true, v, NULL);
        return;
    }
    secret_free(v);
    answer(s, false, NULL, s->why);
}

static rd_secret *start_command(rd_secret *s, struct event_base *base, const char *command,
                                double timeout_s)
{
    s->proc = proc_run(base, command, timeout_s > 0 ? timeout_s : SECRET_CMD_DEFAULT_S,
                       on_cmd, s);
    if (!s->proc)
        snprintf(s->why, sizeof s->why, "cannot start the command%s",
                 command && *command ? "" : ": empty command");
    return s;
}

static rd_secret *answer_later(rd_secret *s, struct event_base *base)
{
    struct timeval zero = {0, 0};
    s->deliver = evtimer_new(base, on_deliver, s);
    evtimer_add(s->deliver, &zero);
    return s;
}

rd_secret *secret_command(struct event_base *base, const char *command, double timeout_s,
                          rd_secret_cb cb, void *ud)
{
    rd_secret *s = xcalloc(1, sizeof *s);
    s->cb = cb;
    s->ud = ud;
    start_command(s, base, command, timeout_s);
    return s->proc ? s : answer_later(s, base);
}

rd_secret *secret_resolve(struct event_base *base, const char *ref, unsigned flags,
                          double timeout_s, rd_secret_cb cb, void *ud)
{
    rd_secret *s = xcalloc(1, sizeof *s);
    s->cb = cb;
    s->ud = ud;
    bool is_cmd;
    const char *command;
    s->value = secret_resolve_now_flags(ref, flags, &is_cmd, &command, s->why, sizeof s->why);
    if (is_cmd && start_command(s, base, command, timeout_s)->proc)
        return s;
    return answer_later(s, base);
}

void secret_cancel(rd_secret *s)
{
    if (!s || s->in_cb)
        return;
    proc_cancel(s->proc);
    secret_destroy(s);
}
