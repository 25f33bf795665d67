#pragma once
/*
 * Secret references (SPEC §6): env:NAME, file:PATH (refused when group/world readable),
 * cmd:COMMAND (stdout, trimmed). cmd: is run in a child process whose stdout is read by
 * a libevent event, so the loop never blocks. Secret buffers are wiped before free.
 */
#include <stdbool.h>
#include <stddef.h>

struct event_base;
typedef struct rd_cmd rd_cmd;

/* ok: out is the trimmed stdout (NUL-terminated, owned by the runner: copy it; it is
 * wiped after the callback). !ok: why says what failed (never the output). */
typedef void (*rd_cmd_cb)(bool ok, const char *out, const char *why, void *ud);

/* Runs `/bin/sh -c command` with stdin and stderr on /dev/null. The callback runs
 * exactly once, from the loop, unless cmd_cancel() is called first. */
rd_cmd *cmd_run(struct event_base *base, const char *command, double timeout_s,
                rd_cmd_cb cb, void *ud);
void cmd_cancel(rd_cmd *c);          /* kills the child, no callback */

/* Synchronous env:/file: resolution. Returns an allocated secret (free with
 * secret_free), or NULL with why. cmd: refs return NULL with *is_cmd = true and
 * *cmd pointing at the command text inside ref. */
char *secret_resolve_now(const char *ref, bool *is_cmd, const char **cmd,
                         char *why, size_t whycap);
void secret_free(char *s);           /* wipes, then frees; NULL ok */
void secret_wipe(void *p, size_t n); /* not optimised away */
