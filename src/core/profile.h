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
 *   key = value ...               # any other settings, read with profile_get()
 *
 *   [query executions]            # named SQL, raw lines until the next [section]
 *   SELECT ... ;
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

typedef struct rd_kv { char *key, *value; int line; } rd_kv;

typedef struct rd_profile_action {
    char *name;              /* retry, drain, undrain, deactivate, activate, ... */
    char *method;            /* POST, PATCH, ... */
    char *path;
    char *body;              /* NULL = no body */
    int line;
} rd_profile_action;

typedef struct rd_profile {
    char *path;              /* file it came from (NULL for built-in) */
    char *name;
    char *store;             /* "postgresql" | "redis" */
    char *semantics;
    rd_kv *settings; size_t n_settings;
    rd_kv *queries; size_t n_queries;            /* key = query name, value = SQL */
    rd_profile_action *actions; size_t n_actions;
} rd_profile;

bool profile_parse(const char *path, const char *text, rd_profile *out, rd_diags *d);
/* The same on text[0..len): a NUL byte inside is an error ("file:line: NUL byte"). */
bool profile_parse_len(const char *path, const char *text, size_t len, rd_profile *out,
                       rd_diags *d);
/* Find and load a profile by name or path: a path (contains '/' or ends in .profile)
 * is read as is; a name is looked up in $REDRIVE_PROFILES, then RD_SRCDIR/profiles
 * (running from the build tree), then RD_DATADIR/profiles. */
bool profile_load(const char *name_or_path, rd_profile *out, rd_diags *d);
void profile_free(rd_profile *p);
const char *profile_get(const rd_profile *p, const char *key);       /* NULL when absent */
const char *profile_query(const rd_profile *p, const char *name);    /* NULL when absent */
const rd_profile_action *profile_action(const rd_profile *p, const char *name);
