#pragma once
/*
 * `:export csv|json` of a view's data, rendered without I/O (the console writes the file).
 * CSV follows RFC 4180: every field that holds a comma, a quote, CR or LF, or starts or
 * ends with a blank is quoted, quotes doubled; lines end in CRLF. Values are sanitized as
 * on screen (control and bidi characters in visible form but LF, invalid UTF-8 → U+FFFD), so
 * printing the file cannot drive a terminal. A value starting with '=', '+', '-', '@', TAB or
 * CR gets a leading "'" so a spreadsheet shows it as text instead of running it as a
 * formula (OWASP); JSON export is unchanged. Times are RFC 3339 UTC, unknowns empty.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

typedef enum { EXPORT_CSV, EXPORT_JSON } rd_export_fmt;

/* Appends one CSV field (escaped) to *buf (allocated, grown); sep: put a comma first. */
void export_csv_field(char **buf, size_t *len, size_t *cap, const char *raw, bool sep);
/* true when the view's export carries message payloads (the file must be 0600). */
bool export_has_payloads(const char *view);
/* The data of an exportable view (views.h: executions, chain, workers, queues, dlq, groups) as CSV or JSON,
 * newly allocated; NULL when the view has nothing to export (err says why). */
char *export_render(const rd_model *m, const char *view, rd_export_fmt fmt, double now, char *err,
                    size_t errcap);
