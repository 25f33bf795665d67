/* LD_PRELOAD shim for test_act_journal.py: fdatasync always fails with EIO, so the test
 * sees that the journal syncs its pending line and refuses the action when it cannot. */
#include <errno.h>
#include <unistd.h>

int fdatasync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}
