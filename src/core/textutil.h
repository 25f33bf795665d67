#pragma once
/* Small text helpers shared by the core's line-oriented parsers. */
#include <stdbool.h>
#include <stddef.h>

/* Trims blanks at both ends in place; returns the new start. */
char *text_trim(char *s);
/* Cuts a trailing " # comment" / " ; comment" (the marker preceded by a blank),
 * ignoring markers inside double quotes. */
void text_strip_comment(char *v);
/* The one file reader: the whole file (at most max bytes) into a NUL-terminated
 * buffer, its length in *len (a NUL byte inside is data, seen through the length).
 * On failure returns NULL and writes a short reason into why. */
char *text_read_file_len(const char *path, size_t max, size_t *len, char *why, size_t whycap);
/* The same from an open descriptor, which is closed. */
char *text_read_fd_len(int fd, size_t max, size_t *len, char *why, size_t whycap);
/* The same for callers that take the text as a C string (it ends at a NUL). */
char *text_read_file(const char *path, size_t max, char *why, size_t whycap);
/* Standard base64 (RFC 4648, padded) of data[0..n), newly allocated. */
char *text_base64(const void *data, size_t n);
/* mkdir -p for the directory part of path (each new one 0700; a last directory named
 * "redrive" of ours is tightened to 0700). On failure writes why. */
bool text_make_parent_dirs(const char *path, char *why, size_t whycap);
/* The user's data directory for redrive: $XDG_DATA_HOME/redrive, else
 * ~/.local/share/redrive; NULL when neither is set (newly allocated). */
char *text_data_dir(void);

/* A growing NUL-terminated text (p is NULL until the first add; the caller frees p). */
typedef struct text_buf {
    char *p;
    size_t n, cap;
} text_buf;
void text_buf_add(text_buf *b, const char *s, size_t n);
void text_buf_str(text_buf *b, const char *s);
void text_buf_printf(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops trailing blanks. */
void text_buf_rtrim(text_buf *b);

/* One item of a list: len bytes at s (not NUL-terminated: a span of the list). */
typedef struct text_span {
    const char *s;
    size_t len;
} text_span;
/* How a list value is split (docs/config.md, "Lists"):
 * TEXT_LIST_WORDS: items separated by commas and/or blanks (space, tab); empty items are
 *   dropped ("a, b,,c d" = a b c d). queues, dlq, sqs_queue_url, sqs_dlq, workers.
 * TEXT_LIST_URLS: URLs separated by a comma that is followed (after blanks) by a scheme
 *   "name://", so that a comma or a blank inside a URL (a password) stays in it; blanks
 *   around each item are dropped; an empty item is kept (", redis://x" is two items, the
 *   first one empty, for the URL parser to refuse). store (Redis). */
typedef enum { TEXT_LIST_WORDS, TEXT_LIST_URLS } text_list_rule;
/* The one list splitter: writes the first max items of list (NULL = "") into out (may be
 * NULL when max is 0) and returns how many items there are (can be more than max). */
size_t text_split_list(const char *list, text_list_rule rule, text_span *out, size_t max);
/* Every item, in a newly allocated array of *n spans (free it; never NULL). */
text_span *text_split_all(const char *list, text_list_rule rule, size_t *n);

/* in with each number of four digits or more in short form, written to out: level 1 keeps
 * three figures ("14810" -> "14.8k", "148100" -> "148k", "1234567" -> "1.2M"), level 2 none
 * after the point ("15k", "1M"). A list's number column too narrow for its digits shows
 * this rather than cut digits. False (out a copy of in) when there is no such number. */
bool text_short_numbers(const char *in, int level, char *out, size_t cap);

/* The epoch time t broken down in local time or UTC (the console's local_time), for
 * strftime. Reads no clock. */
struct tm;
void text_tm(double t, bool local, struct tm *tm);
