#pragma once
/*
 * A copy of each audit journal line for syslog (config `journal_syslog`): one RFC 3164
 * datagram, facility authpriv, severity info, tag "redrive[PID]", the journal line's JSON
 * as the message, sent to an AF_UNIX datagram socket (/dev/log, or the configured path).
 * Done here instead of openlog(3)/syslog(3) so the socket can be any path (a container's,
 * a test's) and nothing process-wide is changed. Best effort and never blocking: a missing
 * or full socket loses the copy (false and why), never the journal line or the action.
 * Only to a socket we trust (fsperm_socket_ok: yours or root's, every directory on the way
 * yours or root's and nobody else's to write), checked at each send: whoever bound the
 * socket reads every audit line.
 */
#include <stdbool.h>
#include <stddef.h>

bool jsyslog_send(const char *socket_path, const char *json, char *why, size_t whycap);
