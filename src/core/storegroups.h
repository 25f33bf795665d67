#pragma once
/*
 * Error groups across the store, in a time window (docs/error-groups.md): what a store's
 * source computed where the data is. The source hands over one prototype execution per
 * distinct raw error of the window (its error, action, status and eligibility by the
 * system's own rule, as a row of the executions list would have) with its tally; this
 * file normalizes them to fingerprints (fingerprint.c, the one definition) and merges
 * them into groups (groups_merge). Opaque; owned by the model once published
 * (model_set_sgroups).
 */
#include <stdbool.h>
#include <stddef.h>

#include "groupid.h"
#include "groups.h"
#include "standout.h"

typedef struct rd_sgroups rd_sgroups;

/* The default window (the last hour) and bound on the failures read (the newest ones of
 * the window). REDRIVE_GROUPS_CAP (a test knob) lowers the bound. */
#define SGROUPS_WINDOW_S 3600.0
enum { SGROUPS_CAP = 200000 };
long sgroups_cap_default(void);

/* A result being built: computed at `at` (epoch) over the `window_s` before it, reading at
 * most `cap` failures. */
rd_sgroups *sgroups_new(double window_s, long cap, double at);
void sgroups_free(rd_sgroups *s);
/* One distinct raw error: the prototype (taken: its strings become the result's) and its
 * tally. */
void sgroups_add(rd_sgroups *s, rd_execution *proto, const rd_group_tally *t);
/* The last prototype added stands for failures spread over values of a dimension: n of
 * them have value (a store's row that tallies several workers at once). When a prototype
 * has any, they replace its own `worker` for what stands out. */
void sgroups_add_dim(rd_sgroups *s, so_dim d, const char *value, size_t n);
/* How many prototypes were added; the same two for the prototype at index i (a source that
 * finds a raw error again, e.g. on another worker, adds to it instead of a copy). */
size_t sgroups_protos(const rd_sgroups *s);
void sgroups_add_tally_at(rd_sgroups *s, size_t i, const rd_group_tally *t);
void sgroups_add_dim_at(rd_sgroups *s, size_t i, so_dim d, const char *value, size_t n);
/* The bound was hit: more failures in the window than the cap. */
void sgroups_set_capped(rd_sgroups *s, bool capped);
/* The window's baseline for what stands out (standout.h; taken, finished by the caller);
 * NULL: none read (each group's list is unknown). Before sgroups_finish. */
void sgroups_set_base(rd_sgroups *s, so_base *b);
/* Done: the groups are merged (sorted as groups_build sorts), and each one's list of what
 * stands out computed from its rows (action, attempt, worker and, through the baseline's
 * workers, host) against the baseline. */
void sgroups_finish(rd_sgroups *s);

size_t sgroups_n(const rd_sgroups *s);
const rd_group *sgroups_at(const rd_sgroups *s, size_t i);   /* borrowed */
double sgroups_window(const rd_sgroups *s);
double sgroups_time(const rd_sgroups *s);       /* when computed (epoch) */
long sgroups_cap(const rd_sgroups *s);
bool sgroups_capped(const rd_sgroups *s);
size_t sgroups_failures(const rd_sgroups *s);   /* failures read (the sum of the counts) */
const so_base *sgroups_base(const rd_sgroups *s);   /* NULL: none */
/* What stands out about the group with fingerprint fp (borrowed list; SO_UNKNOWN when s
 * has no such group or no baseline). */
so_state sgroups_standout(const rd_sgroups *s, const char *fp, const rd_standout **l, size_t *n);
/* The group's line of what stands out, sanitized: "stands out: 90 % on worker 7 (2.5 % of
 * the hour) · 60 % ingest.parse (17 %)" (its first max items), else the state's note
 * (so_state_text). */
/* The onset of the group with fingerprint fp against the ring h (onset.h; h NULL: none);
 * false when s has no such group. */
struct rd_onset;
struct rd_history;
bool sgroups_onset(const rd_sgroups *s, const struct rd_history *h, const char *fp, struct rd_onset *out);
void sgroups_standout_text(const rd_sgroups *s, const rd_group *g, size_t max, char *out, size_t cap);

/* The groups a view shows: the store's when a source computed them (or is computing
 * them: none yet), copied (their LOOP the loop retries among the loaded executions, loops
 * = loop_count of each, may be NULL); else the loaded executions' (groups_build). *out
 * owned (groups_free). */
size_t sgroups_of_model(const rd_model *m, const int *loops, double now, rd_group **out);

/* "1h", "6h", "90m", "2d": a window of 1 minute to 30 days; false otherwise. */
bool sgroups_parse_window(const char *text, double *out);
/* The window as the console and the CLI spell it: "1h", "90m", "2d", "45s". */
void sgroups_window_text(double window_s, char *out, size_t cap);

/* The group `text` names among the store's groups s (NULL: none computed): its fingerprint
 * or an id prefix (groupid.h); *g the group when found (borrowed from s). */
groupid_result sgroups_resolve(const rd_sgroups *s, const char *text, const rd_group **g, char *why, size_t cap);
