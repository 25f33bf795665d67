#include "jsyslog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../io/clock.h"
#include "../core/fsperm.h"
#include "../core/xalloc.h"

enum { LOG_AUTHPRIV_INFO = 10 * 8 + 6 };   /* facility authpriv (10), severity info (6) */

bool jsyslog_send(const char *socket_path, const char *json, char *why, size_t whycap)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (!socket_path || strlen(socket_path) >= sizeof sa.sun_path) {
        snprintf(why, whycap, "syslog: bad socket path");
        return false;
    }
    if (!fsperm_socket_ok(socket_path, why, whycap))
        return false;           /* someone else's socket, or one they could replace */
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    time_t now = (time_t)clock_wall();
    struct tm tm;
    localtime_r(&now, &tm);
    char *msg = xasprintf("<%d>%s %2d %02d:%02d:%02d redrive[%ld]: %s", LOG_AUTHPRIV_INFO,
                          months[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                          (long)getpid(), json);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    size_t len = strlen(msg);
    bool ok = fd >= 0 && sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
                                sizeof sa) == (ssize_t)len;
    if (!ok)
        snprintf(why, whycap, "syslog %s: %s", socket_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(msg);
    return ok;
}
