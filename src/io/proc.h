#pragma once
/*
 * Child processes on the libevent loop: `/bin/sh -c COMMAND` in its own process group,
 * stdin and stderr on /dev/null (curses owns the terminal), stdout read by an event.
 * Every run has a deadline; on timeout or cancel the whole process group is killed.
 * The loop never blocks on the child (except the reap right after a SIGKILL).
 * Output buffers are wiped before they are freed: the output may be a secret.
 */
#include <stdbool.h>
#include <stddef.h>

struct event_base;
typedef struct rd_proc rd_proc;

/* ok: the command exited with status 0 and printed at most the cap; out is its stdout
 * (NUL-terminated, len bytes, owned by the runner and wiped after the callback: copy
 * it). !ok: out is NULL and why says what happened ("exited with status 1", "killed by
 * signal 9", "timed out after 2 s (killed)", "output larger than 65536 bytes"), never
 * the output. */
typedef void (*rd_proc_cb)(bool ok, const char *out, size_t len, const char *why, void *ud);

enum { PROC_OUT_MAX = 64 << 10 };    /* stdout cap */

/* Starts the command; the callback runs exactly once, later, from the loop, unless
 * proc_cancel() is called first. NULL (no callback) when it could not be started.
 * timeout_s <= 0 means 30 s. */
rd_proc *proc_run(struct event_base *base, const char *command, double timeout_s,
                  rd_proc_cb cb, void *ud);
/* A line of a streamed child's stdout (proc_run_argv), without its newline; valid only
 * during the call. proc_cancel is not called from here. */
typedef void (*rd_proc_line_cb)(const char *line, void *ud);
/* argv[0] (a path) run directly with argv, no shell: nothing in argv is ever parsed by
 * one. Its stdout streamed to on_line line by line as it comes (a line longer than the
 * cap fails the run); then cb once (out empty on success: the lines were given). */
rd_proc *proc_run_argv(struct event_base *base, char *const argv[], double timeout_s,
                       rd_proc_line_cb on_line, rd_proc_cb cb, void *ud);
/* Kills the process group and reaps the child; no callback afterwards. NULL ok.
 * Ignored from inside the run's own callback (the run is finished then). */
void proc_cancel(rd_proc *p);
/* "exited with status N" / "killed by signal N" for a waitpid() status. */
void proc_status_text(int wstatus, char *buf, size_t cap);

/* Once at process start, before any loop: ignore SIGPIPE (a peer closing a socket or pipe
 * must give EPIPE, not kill us: hiredis, the TLS bridge and children all write to them) and
 * route libevent's own log messages away from stderr, which the terminal UI owns. */
void proc_init_process(void);
