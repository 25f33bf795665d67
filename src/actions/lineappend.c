/* Appending a line that a failed write does not leave half written (lineappend.h). */
#include "lineappend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static bool lock(int fd, int op)
{
    int rc;
    while ((rc = flock(fd, op)) != 0 && errno == EINTR)
        ;
    return rc == 0;
}

/* Whether the file (size end) ends in a newline or is empty; false with errno when its
 * last byte cannot be read. */
static bool ends_in_newline(int fd, off_t end, bool *yes)
{
    char last = '\n';
    *yes = true;
    if (end > 0) {
        ssize_t r;
        while ((r = pread(fd, &last, 1, end - 1)) < 0 && errno == EINTR)
            ;
        if (r != 1) {
            if (r == 0)
                errno = EIO;   /* shrunk under us: not a file we can append to safely */
            return false;
        }
    }
    *yes = last == '\n';
    return true;
}

/* Every byte of buf written (a short write continued); false with errno. */
static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return false;
        }
        buf += w;
        len -= (size_t)w;
    }
    return true;
}

bool lineappend_write(int fd, const char *line, size_t len, char *why, size_t whycap)
{
    if (!lock(fd, LOCK_EX)) {
        snprintf(why, whycap, "cannot lock it: %s", strerror(errno));
        return false;
    }
    struct stat st;
    bool nl = true, ok = fstat(fd, &st) == 0 && ends_in_newline(fd, st.st_size, &nl);
    if (!ok) {
        snprintf(why, whycap, "cannot read its end: %s", strerror(errno));
    } else if (!(ok = (nl || write_all(fd, "\n", 1)) && write_all(fd, line, len))) {
        int err = errno;
        if (ftruncate(fd, st.st_size) != 0)   /* left as it is: the next line starts anew */
            snprintf(why, whycap, "%s (and a partial line is left: %s)", strerror(err),
                     strerror(errno));
        else
            snprintf(why, whycap, "%s", strerror(err));
    }
    lock(fd, LOCK_UN);
    return ok;
}
