#pragma once
/*
 * The one line tokenizer of the INI-style files: config, profiles, themes, keymaps.
 *
 * It walks a buffer of known length (so a NUL byte is seen, not taken for the end)
 * line by line, numbering from 1; "\n" and "\r\n" both end a line. Blank lines and
 * whole-line comments ('#' or ';' as the first non-blank) are skipped. What remains
 * comes back as a section header "[name args]", a "key = value" pair, or a line of
 * text without '='; what names and values mean is the parser's business. Raw mode
 * (profile SQL bodies) hands back every line as it is until the next header.
 *
 * Every message about a file goes through ini_error as "file:line: message". The
 * reader itself reports a NUL byte and a malformed header, then keeps going: parsers
 * never stop at the first error.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

enum {
    INI_SECTIONS = 1u << 0,     /* a line starting with '[' is a section header */
    INI_HEADER_COL0 = 1u << 1,  /* ... only when the '[' is in column 0 */
    INI_COMMENTS = 1u << 2,     /* cut " # ..." / " ; ..." off values (not inside "") */
};

typedef struct ini_format {
    unsigned flags;
    const char *header_usage;   /* "bad section header (expected X)"; NULL: no hint */
} ini_format;

typedef enum {
    INI_SECTION,   /* name = first word, value = the rest, text = all inside the [];
                    * name NULL when the header was malformed (already reported) */
    INI_PAIR,      /* name = key, value = value, both trimmed (key may be empty) */
    INI_TEXT,      /* a line without '=': text = the trimmed line */
    INI_RAW,       /* raw mode: text = the line without its line end */
    INI_BAD,       /* a line the reader rejected and reported (NUL byte) */
} ini_kind;

typedef struct ini_line {
    ini_kind kind;
    int line;
    char *name, *value, *text;   /* point into the reader; valid until the next call */
} ini_line;

/* A cursor over one buffer; the fields are the reader's own. */
typedef struct ini_reader {
    const char *path;
    rd_diags *d;
    const char *cur, *end;
    ini_format fmt;
    bool raw;
    int line;
    int errors;          /* messages reported through this reader */
    char *buf;
    size_t cap;
} ini_reader;

/* text[0..len) named path in messages; text may be NULL when len is 0. */
void ini_open(ini_reader *r, const char *path, const char *text, size_t len,
              const ini_format *fmt, rd_diags *d);
/* Next significant line into out; false at the end of the text. */
bool ini_next(ini_reader *r, ini_line *out);
/* Raw mode on or off (the parser decides after each section header). */
void ini_set_raw(ini_reader *r, bool raw);
/* The one error path: "path:line: message" (cut at 400 bytes) into the diagnostics,
 * counted. ini_verror: the same for a parser's own variadic wrapper. */
void ini_error(ini_reader *r, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ini_verror(ini_reader *r, int line, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Frees the line buffer; errors can still be reported afterwards. */
void ini_close(ini_reader *r);
