#pragma once
/*
 * A file writer off the loop (bgwrite.c): one thread that runs its owner's save jobs
 * (the last-known snapshot, a system's hour) in the order they were queued. A job owns a
 * copy of what it writes, taken on the loop, so the thread never reads the live model;
 * it does the serialising, the writes, the sync and the rename. No fork: a forked child
 * of this multithreaded process could only call async-signal-safe functions, and copying
 * the page tables of a large process stalled the loop.
 *
 * The owner polls: bgwrite_busy says whether a job is queued or running, bgwrite_failed
 * hands over the reason of the newest failure once. The thread starts with the first job.
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct rd_bgwrite rd_bgwrite;

/* Runs on the writer thread: writes arg's data; false with a reason. */
typedef bool (*rd_bgwrite_fn)(void *arg, char *why, size_t whycap);
/* Frees arg (on the writer thread, after run; or at once when the job is refused). */
typedef void (*rd_bgwrite_free)(void *arg);

rd_bgwrite *bgwrite_new(void);
/* Every queued job run first (blocks), then the thread joined. */
void bgwrite_free(rd_bgwrite *w);
/* Queues run(arg) then free_arg(arg). false (arg freed, why says it) when no thread could
 * be started. */
bool bgwrite_queue(rd_bgwrite *w, rd_bgwrite_fn run, rd_bgwrite_free free_arg, void *arg,
                   char *why, size_t whycap);
/* A job is queued or running. */
bool bgwrite_busy(rd_bgwrite *w);
/* The newest failure since the last call: true once, with its reason. */
bool bgwrite_failed(rd_bgwrite *w, char *why, size_t whycap);
/* Blocks until no job is queued or running. */
void bgwrite_drain(rd_bgwrite *w);
