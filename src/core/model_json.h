#pragma once
/*
 * The model as JSON (snapshot --json, UI fixture files) and as aligned text
 * (snapshot without --json). Field names are the stable ones of SPEC §6; unknown
 * numbers (-1) and times (0) are null. Strings are the raw values made valid UTF-8
 * (invalid bytes → U+FFFD); the JSON encoder escapes control characters.
 *
 * view: NULL/"overview" = sources, counts, executions, workers, queues;
 * "executions", "chain", "workers", "queues", "dlq" = that array (plus sources);
 * "all" = every array (fixtures).
 */
#include <stdbool.h>
#include <stddef.h>
#include "model.h"

/* Newly allocated JSON text; ages are computed against the current time. */
char *model_to_json(const rd_model *m, const char *view);
/* Same with an explicit "now" (epoch seconds) for deterministic output. */
char *model_to_json_at(const rd_model *m, const char *view, double now);
/* Loads arrays present in json into m (replacing them); missing fields get
 * "unknown" defaults. False with a message in err on malformed input. */
bool model_from_json(rd_model *m, const char *json, char *err, size_t errcap);
/* Sanitized, column-aligned text of the view (newly allocated). */
char *model_to_text(const rd_model *m, const char *view, double now);
