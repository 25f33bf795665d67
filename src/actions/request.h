#pragma once
/*
 * Internal to the action layer: mapping an action onto a core API request (profile
 * [action NAME] sections or the default contract) and turning the response into an
 * rd_result with the SPEC §3 message.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/profile.h"
#include "../io/http.h"
#include "actions.h"

typedef struct rd_route {
    const char *method;
    const char *path;        /* template */
    const char *body;        /* template or NULL */
} rd_route;

typedef struct rd_tvars {
    const char *id, *task, *worker, *reason, *operator_;
} rd_tvars;

/* The route for an action: the profile's [action NAME], else the default contract when
 * the profile defines no actions at all. false when unsupported. */
bool route_for(const rd_profile *prof, rd_action kind, rd_route *out);
/* Expands {id} {task} {worker} {reason} {operator}: as one URL path segment (url=true:
 * every byte but A-Za-z0-9-._~ percent-encoded, '/' too) or as JSON string contents
 * (cJSON's escaping). NULL with why when a placeholder has no value, when a URL value is
 * empty, "." or ".." or makes a path segment "." or ".." (%2E counted as a dot: libcurl
 * or the server would send the request to another route), or when a value for a JSON
 * body is not valid UTF-8 (refused, not replaced: see io/url.h). */
char *template_expand(const char *tmpl, const rd_tvars *v, bool url, char *why,
                      size_t whycap);
/* Classifies an HTTP outcome into r (code, http_status, attempt, message). */
void result_from_response(rd_result *r, const rd_http_resp *resp);
/* 128-bit random hex key (32 digits + NUL). */
void idem_key_new(char out[33]);
