/* Secret references and the child-process runner (src/io/secret.c, src/io/proc.c):
 * one row per case, each resolved on a real event loop under an alarm() guard, so a
 * resolver that blocks (a FIFO, a command that never ends) fails the test instead of
 * hanging it. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/io/clock.h"
#include "../../src/io/proc.h"
#include "../../src/io/secret.h"
#include "../unit/check.h"

enum { GUARD_S = 10 };

static char dir[256];
static int real_stderr = 2;          /* while rows run, fd 2 is a file */

typedef struct got {
    struct event_base *base;
    bool called, ok;
    int calls;
    char val[128];
    char why[512];
} got;

static void on_secret(bool ok, const char *v, const char *why, void *ud)
{
    got *g = ud;
    g->called = true;
    g->calls++;
    g->ok = ok;
    snprintf(g->val, sizeof g->val, "%s", ok && v ? v : "");
    snprintf(g->why, sizeof g->why, "%s", !ok && why ? why : "");
    event_base_loopbreak(g->base);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_secret: guard alarm: the resolver blocked\n";
    (void)!write(real_stderr, msg, sizeof msg - 1);
    _exit(2);
}

/* Resolves ref on a fresh loop; *secs = wall time taken. */
static got resolve(const char *ref, unsigned flags, double timeout_s, double *secs)
{
    got g = {0};
    g.base = event_base_new();
    double t0 = clock_mono();
    alarm(GUARD_S);
    rd_secret *s = secret_resolve(g.base, ref, flags, timeout_s, on_secret, &g);
    CHECK_MSG(s != NULL, ref);
    CHECK_MSG(!g.called, ref);           /* never from inside secret_resolve */
    while (!g.called)
        event_base_loop(g.base, EVLOOP_ONCE);
    alarm(0);
    if (secs)
        *secs = clock_mono() - t0;
    /* one more turn: a second callback would show here */
    event_base_loop(g.base, EVLOOP_NONBLOCK);
    CHECK_MSG(g.calls == 1, ref);
    event_base_free(g.base);
    return g;
}

static void write_file(const char *name, const char *content, size_t n, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, content, n) != (ssize_t)n || fchmod(fd, mode) != 0) {
        perror(path);
        exit(2);
    }
    close(fd);
}

typedef struct row {
    const char *name;
    const char *ref;           /* "%D" is replaced by the temp directory */
    unsigned flags;
    double timeout_s;
    bool ok;
    const char *value;         /* when ok */
    const char *why_has;       /* when !ok: substring of the message */
    const char *why_lacks;     /* never in the message (a secret) */
    double max_s;              /* must answer within this */
} row;

static const row rows[] = {
    {"env unset", "env:RD_TEST_UNSET", 0, 0, false, NULL, "RD_TEST_UNSET is not set", NULL, 1},
    {"env empty", "env:RD_TEST_EMPTY", 0, 0, false, NULL, "RD_TEST_EMPTY is empty", NULL, 1},
    {"env trimmed", "env:RD_TEST_SET", 0, 0, true, "s3cret x", NULL, NULL, 1},
    {"env blank", "env:RD_TEST_BLANK", 0, 0, false, NULL, "RD_TEST_BLANK is blank", NULL, 1},
    {"no ref", "", 0, 0, false, NULL, "no secret configured", NULL, 1},
    {"literal refused", "hunter2", 0, 0, false, NULL, "must be a reference", "hunter2", 1},
    {"literal allowed", "hunter2", SECRET_LITERAL_OK, 0, true, "hunter2", NULL, NULL, 1},
    {"file missing", "file:%D/nope", 0, 0, false, NULL, "/nope: No such file", NULL, 1},
    {"file ok, one newline off", "file:%D/ok", 0, 0, true, "pw1\n", NULL, NULL, 1},
    {"file crlf", "file:%D/crlf", 0, 0, true, "pw2", NULL, NULL, 1},
    {"file no newline", "file:%D/bare", 0, 0, true, " pw3 ", NULL, NULL, 1},
    {"file group-readable", "file:%D/group", 0, 0, false, NULL, "/group is group/world "
     "readable or writable (mode 640)", "topsecret", 1},
    {"file world-readable", "file:%D/world", 0, 0, false, NULL, "(mode 604)", "topsecret", 1},
    {"file empty", "file:%D/empty", 0, 0, false, NULL, "/empty is empty", NULL, 1},
    {"file just a newline", "file:%D/nl", 0, 0, false, NULL, "/nl is empty", NULL, 1},
    {"file too large", "file:%D/big", 0, 0, false, NULL, "/big is larger than 65536", NULL, 1},
    {"file is a FIFO", "file:%D/fifo", 0, 0, false, NULL, "/fifo is not a regular file "
     "(a FIFO)", NULL, 1},
    {"file is a directory", "file:%D", 0, 0, false, NULL, "is not a regular file "
     "(a directory)", NULL, 1},
    {"file is a device", "file:/dev/null", 0, 0, false, NULL, "/dev/null is not a regular "
     "file (a device)", NULL, 1},
    {"cmd ok, trimmed", "cmd:printf '  tok-1\\n\\n'", 0, 0, true, "tok-1", NULL, NULL, 5},
    {"cmd false", "cmd:false", 0, 0, false, NULL, "command exited with status 1", NULL, 5},
    {"cmd exit 3", "cmd:echo leaked; exit 3", 0, 0, false, NULL, "command exited with "
     "status 3", "leaked", 5},
    {"cmd not found", "cmd:/nonexistent/redrive-no-such-cmd", 0, 0, false, NULL,
     "exited with status 127", NULL, 5},
    {"cmd killed", "cmd:kill -9 $$", 0, 0, false, NULL, "command killed by signal 9", NULL, 5},
    {"cmd prints nothing", "cmd:true", 0, 0, false, NULL, "command printed nothing", NULL, 5},
    {"cmd stdin is /dev/null", "cmd:cat", 0, 0, false, NULL, "printed nothing", NULL, 5},
    {"cmd output too large", "cmd:yes a | head -c 70000", 0, 0, false, NULL,
     "output larger than 65536", NULL, 5},
    {"cmd past the deadline", "cmd:sleep 20", 0, 0.3, false, NULL, "command timed out "
     "after 0.3 s (killed)", NULL, 2},
    {"cmd stderr discarded", "cmd:echo on-stderr >&2; echo tok-2", 0, 0, true, "tok-2", NULL,
     NULL, 5},
};

static char *expand(const char *ref)
{
    char buf[1024];
    const char *d = strstr(ref, "%D");
    if (!d)
        return strdup(ref);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(d - ref), ref, dir, d + 2);
    return strdup(buf);
}

static void setup_files(void)
{
    write_file("ok", "pw1\n\n", 5, 0600);
    write_file("crlf", "pw2\r\n", 5, 0600);
    write_file("bare", " pw3 ", 5, 0600);
    write_file("group", "topsecret\n", 10, 0640);
    write_file("world", "topsecret\n", 10, 0604);
    write_file("empty", "", 0, 0600);
    write_file("nl", "\n", 1, 0600);
    static char big[SECRET_FILE_MAX + 1];
    memset(big, 'a', sizeof big);
    write_file("big", big, sizeof big, 0600);
    char path[512];
    snprintf(path, sizeof path, "%s/fifo", dir);
    if (mkfifo(path, 0600) != 0) {
        perror("mkfifo");
        exit(2);
    }
    setenv("RD_TEST_SET", " s3cret x\n", 1);
    setenv("RD_TEST_EMPTY", "", 1);
    setenv("RD_TEST_BLANK", " \t\n", 1);
    unsetenv("RD_TEST_UNSET");
}

/* stderr of the test goes to a file while cmd: rows run: a child writing to the
 * terminal would show up there. */
static int stderr_to_file(char *path, size_t cap)
{
    snprintf(path, cap, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    real_stderr = saved;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static void run_rows(void)
{
    char errpath[512];
    int saved = stderr_to_file(errpath, sizeof errpath);
    char report[4096] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const row *r = &rows[i];
        char *ref = expand(r->ref);
        double secs = 0;
        got g = resolve(ref, r->flags, r->timeout_s, &secs);
        char ctx[1024];
        snprintf(ctx, sizeof ctx, "%s: ok=%d val='%s' why='%s' %.2fs", r->name, g.ok, g.val,
                 g.why, secs);
        int ok = g.ok == r->ok && secs <= r->max_s &&
                 (!r->ok || strcmp(g.val, r->value) == 0) &&
                 (r->ok || (g.val[0] == '\0' && strstr(g.why, r->why_has))) &&
                 (!r->why_lacks || !strstr(g.why, r->why_lacks));
        if (!ok && used < sizeof report)
            used += (size_t)snprintf(report + used, sizeof report - used, "  %s\n", ctx);
        check_at(ok, __FILE__, __LINE__, r->name, ctx, NULL);
        free(ref);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    real_stderr = 2;
    struct stat st;
    CHECK_MSG(stat(errpath, &st) == 0 && st.st_size == 0, "a child wrote to our stderr");
    if (report[0])
        fprintf(stderr, "failed rows:\n%s", report);
}

/* The timeout kills the whole process group: a grandchild dies too. We become the
 * subreaper, so the orphaned grandchild is ours to wait for. */
static void test_group_killed(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    char pidfile[512], ref[1200];
    snprintf(pidfile, sizeof pidfile, "%s/grandchild.pid", dir);
    snprintf(ref, sizeof ref, "cmd:sleep 30 & echo $! > %s; wait", pidfile);
    got g = resolve(ref, 0, 0.5, NULL);
    CHECK(!g.ok && strstr(g.why, "timed out"));
    FILE *f = fopen(pidfile, "r");
    int pid = 0;
    CHECK(f && fscanf(f, "%d", &pid) == 1 && pid > 0);
    if (f)
        fclose(f);
    if (pid > 0) {
        int st = 0;
        alarm(GUARD_S);
        pid_t r = waitpid(pid, &st, 0);
        alarm(0);
        CHECK_MSG(r == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                  "the grandchild was not killed with the group");
    }
}

static void never(bool ok, const char *v, const char *why, void *ud)
{
    (void)ok; (void)v; (void)why;
    (*(int *)ud)++;
}

/* Cancel: no callback, and the child is killed and reaped at once. */
static void test_cancel(void)
{
    char pidfile[512], ref[1200];
    snprintf(pidfile, sizeof pidfile, "%s/child.pid", dir);
    snprintf(ref, sizeof ref, "cmd:echo $$ > %s; exec sleep 30", pidfile);
    struct event_base *base = event_base_new();
    int calls = 0;
    rd_secret *s = secret_resolve(base, ref, 0, 10, never, &calls);
    double t0 = clock_mono();
    int pid = 0;
    while (pid <= 0 && clock_mono() - t0 < 5) {     /* wait for the shell to start */
        struct timeval tv = {0, 20000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
        FILE *f = fopen(pidfile, "r");
        if (f) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
    }
    CHECK_MSG(pid > 0, "the command never started");
    secret_cancel(s);
    CHECK_MSG(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "child alive after cancel");
    struct timeval tv = {0, 200000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    CHECK_MSG(calls == 0, "callback after cancel");
    event_base_free(base);

    /* cancelling env:/file: answers that are waiting for the loop */
    base = event_base_new();
    calls = 0;
    secret_cancel(secret_resolve(base, "env:RD_TEST_SET", 0, 0, never, &calls));
    event_base_loop(base, EVLOOP_NONBLOCK);
    CHECK(calls == 0);
    event_base_free(base);
}

/* Owned by someone else: refused (only testable as root, who can chown). */
static void test_not_owned(void)
{
    if (geteuid() != 0) {
        printf("io_secret: not root: the owner check is not exercised\n");
        return;
    }
    write_file("theirs", "pw\n", 3, 0600);
    char path[512], ref[600];
    snprintf(path, sizeof path, "%s/theirs", dir);
    CHECK(chown(path, 65534, 65534) == 0);
    snprintf(ref, sizeof ref, "file:%s", path);
    got g = resolve(ref, 0, 0, NULL);
    CHECK_MSG(!g.ok && strstr(g.why, "/theirs is owned by uid 65534, not by you"), g.why);
}

static void test_sync(void)
{
    bool is_cmd = true;
    const char *cmd = NULL;
    char why[256] = "";
    char *v = secret_resolve_now("env:RD_TEST_SET", &is_cmd, &cmd, why, sizeof why);
    CHECK_STR(v, "s3cret x");
    CHECK(!is_cmd && !cmd);
    secret_free(v);
    v = secret_resolve_now("cmd:pass show x", &is_cmd, &cmd, why, sizeof why);
    CHECK(!v && is_cmd);
    CHECK_STR(cmd, "pass show x");
    v = secret_resolve_now("plain", &is_cmd, &cmd, why, sizeof why);
    CHECK(!v && !is_cmd && strstr(why, "must be a reference"));
}

static void test_status_text(void)
{
    static const struct { const char *sh; const char *want; } t[] = {
        {"exit 0", "exited with status 0"},
        {"exit 1", "exited with status 1"},
        {"exit 255", "exited with status 255"},
        {"kill -9 $$", "killed by signal 9"},
        {"kill -15 $$", "killed by signal 15"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", t[i].sh, (char *)NULL);
            _exit(99);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        char buf[96];
        proc_status_text(st, buf, sizeof buf);
        CHECK_STR(buf, t[i].want);
    }
}

/* proc_run_argv: the lines as they come (the last one without a newline too), an argument
 * given verbatim (no shell reads it), then the exit callback once. */
typedef struct streamed { struct event_base *base; char lines[8][128]; int n, done; bool ok; } streamed;

static void on_stream_line(const char *line, void *ud)
{
    streamed *s = ud;
    if (s->n < 8)
        snprintf(s->lines[s->n++], sizeof s->lines[0], "%s", line);
}

static void on_stream_done(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    streamed *s = ud;
    (void)out, (void)len, (void)why;
    s->ok = ok;
    s->done++;
    event_base_loopbreak(s->base);
}

static void test_stream_argv(void)
{
    static const struct { const char *args[5]; int n; const char *want[3]; } t[] = {
        {{"/bin/sh", "-c", "printf 'a\\nbb\\n'; sleep 0.1; printf 'ccc'", NULL}, 3, {"a", "bb", "ccc"}},
        {{"/bin/echo", "$(touch /tmp/rd-no); `x` 'q' ; a", NULL}, 1, {"$(touch /tmp/rd-no); `x` 'q' ; a"}},
        {{"/bin/sh", "-c", "printf ''", NULL}, 0, {NULL}},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        streamed s = {.base = event_base_new()};
        rd_proc *p = proc_run_argv(s.base, (char *const *)(uintptr_t)t[i].args, 5, on_stream_line, on_stream_done, &s);
        CHECK(p != NULL);
        alarm(GUARD_S);
        while (p && !s.done)
            event_base_loop(s.base, EVLOOP_ONCE);
        alarm(0);
        CHECK(s.done == 1 && s.ok);
        CHECK_MSG(s.n == t[i].n, t[i].args[2] ? t[i].args[2] : t[i].args[1]);
        for (int k = 0; k < t[i].n && k < s.n; k++)
            CHECK_STR(s.lines[k], t[i].want[k]);
        event_base_free(s.base);
    }
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    snprintf(dir, sizeof dir, "/tmp/rd-io-secret.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    setup_files();
    run_rows();
    test_sync();
    test_not_owned();
    test_status_text();
    test_cancel();
    test_group_killed();
    test_stream_argv();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_done("io_secret");
}
