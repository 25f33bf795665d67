#pragma once
/*
 * The one sanitizer for every outside string (SPEC §8). Decodes UTF-8: invalid bytes →
 * U+FFFD; C0, DEL and C1 controls → visible forms (U+2400 control pictures, or "^[" style
 * in ASCII mode); bidi controls (U+202A–202E, U+2066–2069, U+200E/F, U+061C) → "<U+202E>".
 * The result never contains a byte < 0x20 or 0x7f, nor a C1 or bidi code point.
 */
#include <stdbool.h>
#include <stddef.h>

enum { SAN_ASCII = 1u << 0,      /* output 7-bit ASCII only (non-ASCII → '?') */
       SAN_KEEP_NL = 1u << 1 };  /* keep '\n' (multi-line payload views) */

/* Newly allocated sanitized copy of s[0..len). */
char *sanitize_bytes(const char *s, size_t len, unsigned flags);
char *sanitize_str(const char *s, unsigned flags);   /* NULL → "" */
/* Display width (columns) of an already sanitized UTF-8 string. */
int sanitize_width(const char *clean);
/* The display width sanitize_str(raw, flags) would have, without making it (no allocation:
 * the list views measure every cell on screen each paint). */
int sanitize_raw_width(const char *raw, unsigned flags);
/* Copy at most `cols` display columns of a sanitized string into out (cap bytes);
 * when cut, the last column is "…" (or "~" with SAN_ASCII). Returns columns used. */
int sanitize_fit(const char *clean, int cols, char *out, size_t cap, unsigned flags);
/* sanitize_fit that never ends inside a parenthesis: a cut that would leave one open
 * ("refused (127.0…") cuts before it ("refused…") when at least a third of cols is left. */
int sanitize_fit_clause(const char *clean, int cols, char *out, size_t cap, unsigned flags);
/* Valid UTF-8 copy of s[0..len): invalid sequences → U+FFFD, all else unchanged
 * (controls are kept: for JSON output, whose encoder escapes them). */
char *sanitize_utf8(const char *s, size_t len);
/* sanitize_fit with the ellipsis in the middle: "a94db…6789ab", the head and the tail (the
 * tail keeps the larger half: ids and names differ at their ends). Returns columns used. */
int sanitize_fit_mid(const char *clean, int cols, char *out, size_t cap, unsigned flags);
