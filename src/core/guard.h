#pragma once
/*
 * The guard every retry path shares: the error group's retry, a single row, marked rows,
 * the retry chain, the DLQ view (the console's confirmation, src/ui/dialog.c) and
 * `redrive retry` (src/cli/act.c). Each target is
 *   - eligible: the system's own rule (retry.h) says yes: sent;
 *   - ineligible: the rule says no, or its state is unknown (not in the store, the store
 *     unreadable): not sent, with the reason;
 *   - a loop retry: eligible, but a manual retry of the same failure already failed again
 *     the same way (groups.h loop_count): not sent.
 * Only an explicit override sends the last two (the console's override key, the CLI's
 * --force / --override-loop), and every such request is journaled with its override name.
 * Pure functions, unit-tested in tests/unit/test_guard.c.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

typedef enum { GUARD_SEND, GUARD_INELIGIBLE, GUARD_LOOP } rd_guard_kind;

typedef struct rd_guard_item {
    const char *id;
    rd_elig elig;              /* RD_ELIG_YES: eligible; anything else is not */
    const char *why;           /* the verdict's reason; NULL or "" unknown */
    int loops;                 /* loop_count: > 0 is a loop retry */
} rd_guard_item;

typedef struct rd_guard_counts {
    size_t total;
    size_t eligible;           /* eligible by the rule, loop retries included */
    size_t ineligible;         /* not eligible or unknown: not sent */
    size_t loops;              /* eligible loop retries: not sent */
    size_t send;               /* sent without an override: eligible - loops */
} rd_guard_counts;

rd_guard_kind guard_kind(const rd_guard_item *it);
rd_guard_counts guard_count(const rd_guard_item *items, size_t n);
/* One more target into c (a selection streamed page by page); its kind. */
rd_guard_kind guard_add(rd_guard_counts *c, const rd_guard_item *it);
/* Whether a target of this kind is sent: always when eligible, else only overridden. */
bool guard_sends(rd_guard_kind k, bool override);
/* The journal's "override" for a target of this kind sent by override: NULL when
 * eligible, "ineligible", "loop_retry". */
const char *guard_override_name(rd_guard_kind k);
/* "breakdown: 4 eligible, 2 ineligible (not sent), 1 loop retry" */
void guard_breakdown(const rd_guard_counts *c, char *out, size_t cap);
/* One target that is not sent: "ID: not sent: WHY" (ineligible) or "ID: manual retry #K
 * of the same failure" (a loop retry); "" for an eligible one. */
void guard_item_line(const rd_guard_item *it, char *out, size_t cap);
/* The send-time guard's reason for holding an item back (issue 35), from its verdict's
 * why, without figures, so that items count by it ("598 superseded, 12 budget exhausted"):
 * "superseded", "budget exhausted", "not in the store", "now STATUS" (no longer failed:
 * "now completed", "now running"), else the why's words before its figures. */
void guard_held_reason(const char *why, char *out, size_t cap);
