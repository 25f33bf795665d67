#pragma once
/*
 * One execution in full (the detail pane, `snapshot --view execution ID`): the record a
 * source read, as one JSON object with the standard keys below, and its text for the
 * screen. Pure: no I/O, no clock (times are printed in UTC).
 *
 * Standard keys (a profile's [query execution_detail] returns these column names; any
 * other column is kept under its own name):
 *   id, name, status, worker, attempt, max_attempts, chain_root, chain_length, reason,
 *   error, backtrace, params, result, *_at (epoch seconds)
 * params and result (and any value that reads as a JSON object or array) are embedded
 * as JSON, not as strings.
 */
#include <stdbool.h>
#include <stddef.h>

/* The JSON object text of one row: names[i] = vals[i] (NULL = SQL null), malloc'd. */
char *detail_from_row(const char *const *names, const char *const *vals, size_t n);
/* The pane's text: headed sections (times in UTC, error with backtrace, parameters and
 * result pretty-printed with two-space indents), sanitized (flags: sanitize.h; '\n' kept
 * between lines), malloc'd. json NULL or unreadable: a line saying so. */
char *detail_text(const char *json, unsigned san);
/* The payload `c` copies: the parameters as compact JSON (or the whole record when it
 * has none), raw (the clipboard sanitizes), malloc'd; NULL when json is unreadable. */
char *detail_payload(const char *json);
/* A pretty-printed copy of a JSON text (two-space indents); NULL when not JSON. */
char *detail_pretty_json(const char *raw);
