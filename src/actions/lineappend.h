#pragma once
/*
 * One line appended to a file of lines (the journal, a batch record's abandon line) so that
 * a failed write leaves no fragment: a line cut by a full disk would glue the next line to
 * it, and a reader could no longer tell that the next line's request was sent.
 *
 * Under an exclusive flock (every redrive process appending to the file takes it): a file
 * that does not end in a newline (a line cut by a crash) gets one first; the line is
 * written whole (a short write continued, never interleaved with another appender's); a
 * write that fails (ENOSPC, EIO, EFBIG) is truncated back to where the file ended. The fd
 * is opened O_RDWR | O_APPEND: its last byte is read back. Syncing is the caller's.
 */
#include <stdbool.h>
#include <stddef.h>

/* true when line[0..len) is in the file; false with why (the system's reason only, e.g.
 * "No space left on device"; the caller names the file). */
bool lineappend_write(int fd, const char *line, size_t len, char *why, size_t whycap);
