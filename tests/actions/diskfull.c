/* LD_PRELOAD shim for test_act_batch_diskfull.py: a disk that fills up in the middle of a
 * journal line, as a real one does. Only writes to a file named journal.jsonl are touched;
 * a write "matches" when its bytes hold every '|'-separated part of the variable's value.
 *   RD_FULL_CUT   the write that fills the disk: half of it is written, the count returned
 *                 (a short write); from then on every journal write fails with ENOSPC ...
 *   RD_FULL_FREE  ... until one that matches this: the disk has room again, it is written.
 *   RD_FULL_HOLD  a write that matches this never returns (a kill -9 finds the process
 *                 there); the file RD_FULL_MARK is created first, so the test knows.
 * Each happens once. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool cut_done, full, hold_done;

static ssize_t real_write(int fd, const void *buf, size_t n)
{
    ssize_t (*real)(int, const void *, size_t) = NULL;
    void *sym = dlsym(RTLD_NEXT, "write");
    memcpy(&real, &sym, sizeof real);   /* POSIX: a function's address through void * */
    return real(fd, buf, n);
}

static bool is_journal(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return false;
    path[n] = '\0';
    size_t len = (size_t)n, sfx = strlen("/journal.jsonl");
    return len >= sfx && strcmp(path + len - sfx, "/journal.jsonl") == 0;
}

static bool matches(const char *var, const void *buf, size_t n)
{
    const char *want = getenv(var);
    if (!want || !*want)
        return false;
    while (*want) {
        const char *bar = strchr(want, '|');
        size_t len = bar ? (size_t)(bar - want) : strlen(want);
        if (!memmem(buf, n, want, len))
            return false;
        want += len + (bar != NULL);
    }
    return true;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (!is_journal(fd))
        return real_write(fd, buf, n);
    if (!hold_done && matches("RD_FULL_HOLD", buf, n)) {
        hold_done = true;
        const char *mark = getenv("RD_FULL_MARK");
        int m = mark ? open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
        if (m >= 0)
            close(m);
        for (;;)
            pause();
    }
    if (full && matches("RD_FULL_FREE", buf, n))
        full = false;
    if (full) {
        errno = ENOSPC;
        return -1;
    }
    if (!cut_done && matches("RD_FULL_CUT", buf, n)) {
        cut_done = full = true;
        return real_write(fd, buf, n / 2);
    }
    return real_write(fd, buf, n);
}
