#pragma once
/*
 * A system's last hour, kept by its session (core/history.h holds the ring and the
 * file): one sample per HIST_STEP_S taken from the session's model on a timer, only
 * while every source is answering (a source down or not yet answered is a gap, never a
 * stale value); loaded at open from the state directory, saved every SYSHIST_SAVE_S in a
 * child process (the loop never waits for the disk) and once more, in place, at close.
 *
 * The file: $XDG_STATE_HOME/redrive/history/NAME.hist (default ~/.local/state/...), the
 * system's name with every byte outside [A-Za-z0-9._-] as %XX, mode 0600 in the state
 * directory's rules (core/fsperm.h: a real directory of ours nobody else can write).
 * Two consoles on one system write the same file: the last save wins.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/config.h"
#include "../core/history.h"
#include "../core/model.h"
#include "../io/loop.h"


#define SYSHIST_SAVE_S 60.0   /* REDRIVE_HISTORY_SAVE_S=SECONDS (tests) */

typedef struct rd_syshist rd_syshist;

/* The history file of system, allocated; NULL when neither XDG_STATE_HOME nor HOME is set. */
char *syshist_path(const char *system);
/* Loads the system's file (a missing one is an empty hour). why gets a problem worth a
 * diagnostic (a damaged or refused file; "" otherwise). With a loop (base), samples m
 * every step once syshist_start is called and saves periodically; without one it only
 * reads. m and c are borrowed and must outlive the history. Never NULL. */
rd_syshist *syshist_open(const char *system, rd_loop *base, const rd_model *m,
                         const rd_system_cfg *c, char *why, size_t whycap);
void syshist_start(rd_syshist *h);
/* Saves (when a sample was taken since the last save; a save still running in a child
 * is waited for first) and frees. */
void syshist_free(rd_syshist *h);
const rd_history *syshist_get(const rd_syshist *h);
/* Takes one sample of m at now (the timer's work; tests). */
void syshist_sample(rd_syshist *h, double now);
/* Reads the system's file into h (history_load); false with why when it is refused. */
bool syshist_read(const char *system, rd_history *h, char *why, size_t whycap);
