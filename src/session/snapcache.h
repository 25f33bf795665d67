#pragma once
/*
 * The last-known snapshot: what the console showed of a system, kept in a small file so
 * the next start paints data at once (marked stale until the first refresh answers).
 *
 * One file per configuration file + system under $XDG_CACHE_HOME/redrive/ (default
 * ~/.cache/redrive/), mode 0600 in a 0700 directory. It holds the overview's arrays only
 * (counts, the executions page, workers, queues, each DLQ source's total, marked cached on
 * load until that source answers): never the sources' states or errors
 * (which may quote a store address), the DLQ (payload bodies) or any secret.
 *
 * The file is outside data on load: a file that is not a regular file of ours, writable
 * by others, too large, of another system or malformed is ignored with a reason.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/model.h"
#include "bgwrite.h"

typedef enum {
    SNAPCACHE_NONE,      /* no cache file (or no cache directory): nothing to say */
    SNAPCACHE_LOADED,    /* the model holds the cached arrays */
    SNAPCACHE_IGNORED,   /* a file is there but unusable: why says it */
} snapcache_status;

/* The cache file of (config_path, system), allocated; NULL when neither XDG_CACHE_HOME
 * nor HOME is set. */
char *snapcache_path(const char *config_path, const char *system);

/* Writes m's overview arrays to path atomically (temporary file, synced, then renamed), mode 0600,
 * creating the directory 0700. saved_at: epoch seconds. False with a reason. */
bool snapcache_save(const char *path, const char *system, const rd_model *m, double saved_at,
                    char *why, size_t whycap);

/* snapcache_save on w's writer thread (bgwrite.h) of a copy of m taken now
 * (model_copy_cache): the loop pays the copy, the thread the JSON (~10 ms at a few hundred
 * rows), the writes, the sync and the rename. false (why) when the thread cannot start;
 * a failure of the write itself comes from bgwrite_failed. */
bool snapcache_save_bg(rd_bgwrite *w, const char *path, const char *system, const rd_model *m,
                       double saved_at, char *why, size_t whycap);

/* Loads the arrays of path into m. saved_at receives the time they were written. */
snapcache_status snapcache_load(const char *path, const char *system, rd_model *m,
                                double *saved_at, char *why, size_t whycap);
