/* Test hooks (testhook.h): compiled to "never" unless RD_TEST_HOOKS. */
#include "testhook.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_build.h"

bool testhook_enabled(void)
{
    return RD_TEST_HOOKS != 0;
}

const char *testhook_env(const char *name)
{
#if RD_TEST_HOOKS
    return getenv(name);
#else
    (void)name;
    return NULL;
#endif
}

FILE *testhook_trace_open(const char *path, bool truncate)
{
    if (!testhook_enabled() || !path || !*path)
        return NULL;
    /* O_NONBLOCK: a FIFO without a reader is refused, not waited on */
    int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    int fd = open(path, flags, 0600);
    if (fd < 0)
        return NULL;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
              st.st_nlink == 1 && (!truncate || ftruncate(fd, 0) == 0);
    FILE *f = ok ? fdopen(fd, "a") : NULL;
    if (!f)
        close(fd);
    return f;
}
