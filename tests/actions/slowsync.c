/* LD_PRELOAD shim for test_act_batch_groupsync.py: a slow disk that counts its syncs. An
 * fdatasync of a file named journal.jsonl sleeps RD_SYNC_MS milliseconds (a disk whose
 * sync takes that long), then syncs, then appends one line to the file RD_SYNC_LOG:
 *   <bytes of the journal at the sync> <CLOCK_REALTIME seconds when the sync returned>
 * so the test counts the journal's syncs and knows which lines each one covered, and when.
 * Other fds' syncs are passed through untouched and not logged. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

int fdatasync(int fd)
{
    int (*real)(int) = NULL;
    void *sym = dlsym(RTLD_NEXT, "fdatasync");
    memcpy(&real, &sym, sizeof real);   /* POSIX: a function's address through void * */
    if (!is_journal(fd))
        return real ? real(fd) : 0;
    const char *ms = getenv("RD_SYNC_MS");
    long wait = ms ? atol(ms) : 0;
    struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
    struct stat st;
    off_t size = fstat(fd, &st) == 0 ? st.st_size : -1;
    if (wait > 0)
        nanosleep(&ts, NULL);
    int rc = real ? real(fd) : 0;
    const char *log = getenv("RD_SYNC_LOG");
    int lf = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (lf >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        char line[96];
        int len = snprintf(line, sizeof line, "%lld %lld.%06ld\n", (long long)size,
                           (long long)now.tv_sec, now.tv_nsec / 1000);
        ssize_t w = write(lf, line, (size_t)len);
        (void)w;
        close(lf);
    }
    return rc;
}
