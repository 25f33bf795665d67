/* LD_PRELOAD shim for test_journal_thread.py: fdatasync waits until the file named by
 * RD_SYNC_GATE exists (a disk that takes as long as the test wants), then syncs. With the
 * journal written on the event loop, the console would freeze until then. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fdatasync(int fd)
{
    const char *gate = getenv("RD_SYNC_GATE");
    struct timespec ts = {0, 20 * 1000 * 1000};
    while (gate && access(gate, F_OK) != 0)
        nanosleep(&ts, NULL);
    int (*real)(int) = NULL;
    void *sym = dlsym(RTLD_NEXT, "fdatasync");
    memcpy(&real, &sym, sizeof real);   /* POSIX: a function's address through void * */
    return real ? real(fd) : 0;
}
