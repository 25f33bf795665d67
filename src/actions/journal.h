#pragma once
/*
 * The audit journal (SPEC §3): JSON lines appended to
 * $XDG_STATE_HOME/redrive/journal.jsonl (fallback ~/.local/state/redrive/journal.jsonl).
 * The state directory is created 0700 and must be a real directory of ours that nobody
 * else can write; the file a regular file of ours that nobody else can write (made 0600
 * when others can read it), opened without blocking (a FIFO there is refused at once).
 * Each line is on disk (fdatasync; the directory fsynced when the file is created) before
 * journal_append returns true, and one that cannot be written whole leaves nothing of it
 * (lineappend.h: locked, a newline first after a fragment, truncated back on failure); the actor writes its lines through a writer thread
 * (jwriter.h), so the console's loop never waits for the disk. Written ahead: a request is journaled with code "pending"
 * before it is sent, then a second line with the same
 * idempotency_key gives its outcome ("ok", "not_found", ..., "unknown" when redrive
 * stopped while it was in flight). A refusal before anything is sent is one line.
 * {"time","operator","system","action","targets":[...],"idempotency_key",
 * "http_status","result","code"}, and for one item of a console batch also "batch" (the
 * batch id shared by its items), "fp" and "attempt" (the execution's error fingerprint
 * and attempt when it was retried: the retry-loop breaker reads them back) and
 * "override" (what the operator overrode to send it: "loop_retry", the retry-loop
 * breaker; "ineligible", the retry eligibility (core/guard.h); "drain_warning", the CLI
 * drain's warnings); an item of a resumable batch also "item" (its number in the batch
 * record, batchrec.h). Never a token.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/groups.h"

typedef struct rd_journal_rec {
    const char *operator_;       /* NULL → "unknown" */
    const char *system;
    const char *action;
    const char *const *targets;  /* n_targets strings */
    size_t n_targets;
    const char *idempotency_key; /* NULL when no request was made */
    long http_status;            /* 0 = none */
    const char *result;          /* short human summary */
    const char *code;            /* result code name, e.g. "ok", "maybe_applied" */
    const char *batch;           /* batch id, NULL = not part of a batch */
    const char *fp;              /* error fingerprint of the target, NULL = not written */
    int attempt;                 /* the target's attempt, <= 0 = not written */
    const char *override_;       /* "loop_retry", "ineligible", "drain_warning", else NULL */
    bool has_item;               /* with batch: "item", the target's number in the batch
                                  * record (batchrec.h) */
    size_t item;
    const char *syslog;          /* config journal_syslog: a syslog socket that gets a copy
                                  * of the line (jsyslog.h), NULL = none */
} rd_journal_rec;

typedef struct rd_journal_entry {
    bool malformed;              /* the line was not a journal record: see raw */
    char *raw;                   /* the line as read (capped); raw, sanitize to show */
    char *time, *operator_, *system, *action, *idempotency_key, *result, *code;
    char *batch, *fp, *override_;   /* NULL when the line has none */
    int attempt;                 /* 0 when the line has none */
    char **targets;
    size_t n_targets;
    long http_status;
} rd_journal_entry;

/* Newly allocated default path; NULL when neither XDG_STATE_HOME nor HOME is set. */
char *journal_default_path(void);
/* Appends one record (path NULL = default) and syncs it to disk. Creates directories 0700
 * and the file 0600. false with a reason on failure (then nothing may be sent). */
bool journal_append(const char *path, const rd_journal_rec *rec, char *why, size_t whycap);
/* The two halves of journal_append: the record's line (JSON and a newline, its time taken
 * now), and the one write path (the line appended and synced, then its syslog copy when
 * syslog is not NULL). jwriter.h runs the second off the loop. */
char *journal_line(const rd_journal_rec *rec);
bool journal_write_line(const char *path, const char *line, const char *syslog, char *why,
                        size_t whycap);
/* Group commit: n lines for one path (NULL = default) appended in order, each whole or
 * not at all as journal_write_line does, then one fdatasync for them all: ok[i] is true
 * only when line i is in the file and on disk (a failed sync fails every line it covers),
 * else why[i] (whycap bytes each) says why. The syslog copy of each line written follows
 * the sync. Returns the number of fdatasync calls made (0 or 1). */
int journal_write_lines(const char *path, const char *const *lines, const char *const *syslog,
                        size_t n, bool *ok, char (*why)[256]);
/* Creates the directory (0700) and the file (0600) if needed, with the checks above:
 * false with a reason when the journal cannot be written (actions are then refused). */
bool journal_check(const char *path, char *why, size_t whycap);
/* The last `max` actions, oldest first, one entry per action with its latest state (a
 * pending line and its outcome folded into the outcome; a pending line without one
 * stays "pending"). A missing or empty journal gives zero entries and true. Malformed
 * lines come back as entries with malformed=true. */
bool journal_read_tail(const char *path, size_t max, rd_journal_entry **out, size_t *n,
                       char *why, size_t whycap);
void journal_entries_free(rd_journal_entry *e, size_t n);
/* The retry-loop breaker's memory: the manual retries of `system` the core accepted
 * (action "retry", code "ok", one target), as rd_retry_record borrowing e's strings.
 * Allocated (free it; NULL when none), *n set. */
rd_retry_record *journal_retries(const rd_journal_entry *e, size_t ne, const char *system,
                                 size_t *n);
/* Reading a damaged line. A line cut by a full disk or a crash (lineappend.h keeps new
 * ones from being left; older versions left them) has the next line glued to it. Every
 * record starts with {"time": and holds that text nowhere else (a string's quotes are
 * escaped), so a line that does not parse is read as pieces, each from one record start to
 * the next: the glued line is read whole, the fragment stays a damaged piece.
 * journal_piece_end: the end of the piece that starts at p (the next record start after
 * p[0]), or len. journal_line_parses: whether p[0..len) is one JSON object. */
size_t journal_piece_end(const char *p, size_t len);
bool journal_line_parses(const char *p, size_t len);
/* RFC 3339 UTC time with milliseconds, e.g. 2026-05-01T12:00:00.123Z. */
void journal_time_now(char *buf, size_t cap);
