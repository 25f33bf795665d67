#pragma once
/*
 * Profile files (profiles/NAME.profile): data, not C. Format (see docs/profiles.md):
 *
 *   # comment
 *   [profile]
 *   name = attune
 *   store = postgresql            # postgresql | redis
 *   semantics = attune            # attune | tasker | alakai | openagents
 *   variant_query = detect        # optional: query returning one text value, the name
 *                                 # of a sibling profile to load instead (schema eras)
 *   actions_from = attune         # optional: the profile whose [action] routes this one
 *                                 # falls back to (a schema era names its umbrella)
 *   key = value ...               # any other settings, read with profile_get()
 *
 *   [query executions]            # named SQL, raw lines until the next [section]
 *   SELECT ... ;
 *   [query queues optional]       # optional: when it fails (missing relation, extension,
 *                                 # permission) its panel is empty with a note and the
 *                                 # source stays ok; "required" (the default) may be said
 *
 *   [action retry]                # how an action maps onto the core API
 *   method = POST
 *   path = /api/v1/executions/{id}/retry      # {id} {task} {worker} are URL-escaped
 *   body = {"reason":"manual_retry"}           # {reason} {operator} JSON-escaped
 *
 * Errors are reported as file:line: message, all of them.
 */
#include <stdbool.h>
#include <stddef.h>
#include "diag.h"

typedef struct rd_kv {
    char *key, *value;
    int line;
    bool optional;           /* queries only: [query NAME optional] */
} rd_kv;

typedef struct rd_profile_action {
    char *name;              /* retry, drain, undrain, deactivate, activate, ... */
    char *method;            /* POST, PATCH, ... */
    char *path;
    char *body;              /* NULL = no body */
    int line;
} rd_profile_action;

typedef struct rd_profile rd_profile;
struct rd_profile {
    char *path;              /* file it came from (NULL for built-in) */
    char *name;
    char *store;             /* "postgresql" | "redis" */
    char *semantics;
    rd_kv *settings; size_t n_settings;
    rd_kv *queries; size_t n_queries;            /* key = query name, value = SQL */
    rd_profile_action *actions; size_t n_actions;
    /* owned: the profile named by actions_from = NAME; profile_action() looks there for
     * any route this one does not define. Settings and queries are never inherited. */
    rd_profile *actions_from;
};

bool profile_parse(const char *path, const char *text, rd_profile *out, rd_diags *d);
/* The same on text[0..len): a NUL byte inside is an error ("file:line: NUL byte"). */
bool profile_parse_len(const char *path, const char *text, size_t len, rd_profile *out,
                       rd_diags *d);
/* Find and load a profile by name or path: a path (contains '/' or ends in .profile)
 * is read as is; a name is found by datafile_find() (datafile.h). An actions_from
 * profile is loaded with it (next to it first). */
bool profile_load(const char *name_or_path, rd_profile *out, rd_diags *d);
/* The same, looking for a name next to the file `near` first (a schema era next to
 * its umbrella profile). */
bool profile_load_near(const char *name, const char *near, rd_profile *out, rd_diags *d);
void profile_free(rd_profile *p);
const char *profile_get(const rd_profile *p, const char *key);       /* NULL when absent */
/* Whether `who` ("store" or "broker") holds a DLQ: the profile's dlq_source lists it
 * (words separated by spaces or commas), or the profile does not say. */
bool profile_dlq_from(const rd_profile *p, const char *who);
const char *profile_query(const rd_profile *p, const char *name);    /* NULL when absent */
/* true when the query is marked [query NAME optional] (false when absent). */
bool profile_query_optional(const rd_profile *p, const char *name);
/* The route for an action: this profile's [action NAME], else its actions_from chain's. */
const rd_profile_action *profile_action(const rd_profile *p, const char *name);
/* true when the profile or its actions_from chain defines any [action] (a profile that
 * defines none gets the default contract, docs/core-api.md). */
bool profile_has_actions(const rd_profile *p);
/* true when status is one of the execution statuses of p's semantics (case folded), or
 * the semantics has no list; else false with why = "no status 'X' in SEMANTICS (did you
 * mean Y?)" (or the list when nothing is close). */
bool profile_status_known(const rd_profile *p, const char *status, char *why, size_t cap);
