#pragma once
/*
 * The model as JSON (snapshot --json, UI fixture files) and as aligned text
 * (snapshot without --json). Field names are the stable ones of SPEC §6; unknown
 * numbers (-1) and times (0) are null. Strings are the raw values made valid UTF-8
 * (invalid bytes → U+FFFD); C0 controls are escaped by the encoder, and DEL, C1
 * controls and bidi controls by json_text_safe, so the output is safe on a terminal.
 *
 * view: a name of the view table (views.h); NULL or unknown = "overview":
 * sources, counts, executions, workers, queues;
 * "executions", "chain", "workers", "queues", "dlq" = that array (plus sources);
 * "all" = every array (fixtures); "cache" = the overview's arrays without sources (the
 * last-known snapshot file).
 */
#include <stdbool.h>
#include <stddef.h>
#include "model.h"

/* Newly allocated JSON text; ages are computed against now (epoch seconds: the caller's
 * clock_wall(), or a fixed time for deterministic output). The core reads no clock. */
char *model_to_json_at(const rd_model *m, const char *view, double now);
/* The same with the system's last hour as "history" (history_json), h NULL: none. */
struct rd_history;
char *model_to_json_hist(const rd_model *m, const char *view, double now,
                         const struct rd_history *h);
/* The same, with the ring the groups' onsets are set against (onset.h; NULL: none read),
 * whether or not the hour itself is written. */
char *model_to_json_onset(const rd_model *m, const char *view, double now,
                          const struct rd_history *h, const struct rd_history *onset_h);
/* Loads arrays present in json into m (replacing them); missing fields get
 * "unknown" defaults. Ages in the JSON (heartbeat_age_s, age_ms) count back from its
 * "now", else from the caller's now. False with a message in err on malformed input. */
bool model_from_json(rd_model *m, const char *json, double now, char *err, size_t errcap);
/* Printed JSON made terminal-safe, newly allocated: invalid UTF-8 → U+FFFD; DEL,
 * C1 (U+0080–U+009F), bidi controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069)
 * and U+2028/U+2029 → \uXXXX. Non-ASCII only occurs inside strings in printed JSON,
 * so the escapes change no value. Every JSON writer that reaches a terminal uses it. */
char *json_text_safe(const char *json);
/* Sanitized, column-aligned text of the view (newly allocated). */
char *model_to_text(const rd_model *m, const char *view, double now);
