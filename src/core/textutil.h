#pragma once
/* Small text helpers shared by the core's line-oriented parsers. */
#include <stdbool.h>
#include <stddef.h>

/* Trims blanks at both ends in place; returns the new start. */
char *text_trim(char *s);
/* Cuts a trailing " # comment" / " ; comment" (the marker preceded by a blank),
 * ignoring markers inside double quotes. */
void text_strip_comment(char *v);
/* Next line of a NUL-terminated text: returns a newly allocated copy without the
 * '\n' (and a trailing '\r'), advances *cur; NULL at the end. */
char *text_next_line(const char **cur);
/* Reads a whole file (at most max bytes) into a NUL-terminated buffer. On failure
 * returns NULL and writes a short reason into why. */
char *text_read_file(const char *path, size_t max, char *why, size_t whycap);
