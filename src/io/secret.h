#pragma once
/*
 * The one secret resolver (SPEC §6), for sources and actions alike:
 *   env:NAME   the variable's value, trimmed of surrounding whitespace (unset, empty
 *              or blank → error)
 *   file:PATH  the file's content minus one trailing newline ("~/" = $HOME). Opened
 *              without following into a FIFO or a terminal (O_NONBLOCK|O_NOCTTY), then
 *              refused unless it is a regular file, owned by us, not group/world
 *              accessible, at most 64 KiB and not empty. Messages name the path only.
 *   cmd:CMD    stdout of `/bin/sh -c CMD` run as a child on the loop (io/proc.h) with a
 *              deadline, trimmed of surrounding whitespace; failures say how it ended
 *              ("exited with status 1"), never what it printed.
 *   literal    only with SECRET_LITERAL_OK (the config refuses literals elsewhere).
 * Secret buffers are wiped before they are freed. No message ever contains a secret.
 */
#include <stdbool.h>
#include <stddef.h>

struct event_base;
typedef struct rd_secret rd_secret;

enum { SECRET_LITERAL_OK = 1u << 0,  /* a value without a known prefix is the secret */
       SECRET_FILE_MAX = 64 << 10 };

/* ok: secret is the value (NUL-terminated, owned by the resolver and wiped after the
 * callback: copy it). !ok: secret is NULL and why says what failed. */
typedef void (*rd_secret_cb)(bool ok, const char *secret, const char *why, void *ud);

/* Resolves ref. The callback runs exactly once, later, from the loop (also for env: and
 * file:, and for errors), unless secret_cancel() is called first. Never NULL.
 * timeout_s bounds a cmd: (<= 0: 30 s). */
rd_secret *secret_resolve(struct event_base *base, const char *ref, unsigned flags,
                          double timeout_s, rd_secret_cb cb, void *ud);
/* The same for a bare command (a setting that is a command, not a reference): stdout
 * trimmed, with cmd:'s deadline and messages. */
rd_secret *secret_command(struct event_base *base, const char *command, double timeout_s,
                          rd_secret_cb cb, void *ud);
void secret_cancel(rd_secret *s);    /* kills a running cmd:, no callback; NULL ok */

/* Synchronous env:/file: (and literal) resolution, for code without a loop. Returns an
 * allocated secret (free with secret_free), or NULL with why. cmd: refs return NULL
 * with *is_cmd = true and *cmd pointing at the command text inside ref. */
char *secret_resolve_now(const char *ref, bool *is_cmd, const char **cmd,
                         char *why, size_t whycap);
/* The same with flags (SECRET_LITERAL_OK). */
char *secret_resolve_now_flags(const char *ref, unsigned flags, bool *is_cmd,
                               const char **cmd, char *why, size_t whycap);
void secret_free(char *s);           /* wipes, then frees; NULL ok */
void secret_wipe(void *p, size_t n); /* not optimised away */
