/* The test hooks (core/testhook.h): honoured only in a build set up with -Dtest_hooks=true
 * (then a trace never goes through a symlink, a hard link or a file of another kind), in
 * any other build never at all. Runs in both. */
#include "testhook.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "rd_build.h"

static char *slurp(const char *path)
{
    static char buf[256];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n < 0 ? NULL : buf;
}

static bool trace(const char *path, bool truncate, const char *text)
{
    FILE *f = testhook_trace_open(path, truncate);
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static void test_env(void)
{
    setenv("REDRIVE_NOW", "1700000000", 1);
    CHECK(testhook_enabled() == (RD_TEST_HOOKS != 0));
    if (testhook_enabled())
        CHECK_STR(testhook_env("REDRIVE_NOW"), "1700000000");
    else
        CHECK_STR(testhook_env("REDRIVE_NOW"), NULL);
    CHECK_STR(testhook_env("REDRIVE_NO_SUCH_HOOK"), NULL);
}

static void test_trace(const char *dir)
{
    char path[512], victim[512], link_[512], hard[512];
    snprintf(path, sizeof path, "%s/trace", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link_, sizeof link_, "%s/link", dir);
    snprintf(hard, sizeof hard, "%s/hard", dir);
    bool on = testhook_enabled();
    /* a fresh path: created 0600 and appended to; truncate empties it first */
    CHECK(trace(path, false, "one\n") == on);
    CHECK(trace(path, false, "two\n") == on);
    CHECK_STR(slurp(path), on ? "one\ntwo\n" : NULL);
    CHECK(trace(path, true, "three\n") == on);
    CHECK_STR(slurp(path), on ? "three\n" : NULL);
    struct stat st;
    CHECK(!on || (stat(path, &st) == 0 && (st.st_mode & 0777) == 0600));
    /* a symlink to someone's file, or a second name of it: never written through */
    int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
    close(fd);
    CHECK(symlink(victim, link_) == 0 && link(victim, hard) == 0);
    CHECK(!trace(link_, true, "owned\n") && !trace(link_, false, "owned\n"));
    CHECK(!trace(hard, true, "owned\n") && !trace(hard, false, "owned\n"));
    CHECK_STR(slurp(victim), "keep\n");
    /* a directory or a FIFO: refused, and nothing waits on the FIFO */
    CHECK(!trace(dir, false, "x"));
    unlink(hard);
    CHECK(mkfifo(hard, 0600) == 0 && !trace(hard, false, "x"));
    CHECK(testhook_trace_open(NULL, false) == NULL && testhook_trace_open("", false) == NULL);
    unlink(hard);
    unlink(link_);
    unlink(victim);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    static char dir[] = "/tmp/rd-testhook-XXXXXX";
    test_env();
    test_trace(mkdtemp(dir));
    return check_done("testhook");
}
