#include "guard.h"

#include <stdio.h>
#include <string.h>

rd_guard_kind guard_kind(const rd_guard_item *it)
{
    if (it->elig != RD_ELIG_YES)
        return GUARD_INELIGIBLE;
    return it->loops > 0 ? GUARD_LOOP : GUARD_SEND;
}

rd_guard_kind guard_add(rd_guard_counts *c, const rd_guard_item *it)
{
    rd_guard_kind k = guard_kind(it);
    c->total++;
    c->eligible += k != GUARD_INELIGIBLE;
    c->ineligible += k == GUARD_INELIGIBLE;
    c->loops += k == GUARD_LOOP;
    c->send += k == GUARD_SEND;
    return k;
}

rd_guard_counts guard_count(const rd_guard_item *items, size_t n)
{
    rd_guard_counts c = {0};
    for (size_t i = 0; i < n; i++)
        guard_add(&c, &items[i]);
    return c;
}

bool guard_sends(rd_guard_kind k, bool override)
{
    return k == GUARD_SEND || override;
}

const char *guard_override_name(rd_guard_kind k)
{
    return k == GUARD_INELIGIBLE ? "ineligible" : k == GUARD_LOOP ? "loop_retry" : NULL;
}

void guard_breakdown(const rd_guard_counts *c, char *out, size_t cap)
{
    snprintf(out, cap, "breakdown: %zu eligible, %zu ineligible (not sent), %zu loop retr%s", c->eligible,
             c->ineligible, c->loops, c->loops == 1 ? "y" : "ies");
}

void guard_item_line(const rd_guard_item *it, char *out, size_t cap)
{
    const char *id = it->id ? it->id : "?";
    switch (guard_kind(it)) {
    case GUARD_INELIGIBLE:
        snprintf(out, cap, "%s: not sent: %s", id,
                 it->why && *it->why ? it->why : "retry eligibility unknown");
        break;
    case GUARD_LOOP:
        snprintf(out, cap, "%s: manual retry #%d of the same failure", id, it->loops + 1);
        break;
    case GUARD_SEND:
        if (cap)
            out[0] = 0;
        break;
    }
}

void guard_held_reason(const char *why, char *out, size_t cap)
{
    static const struct { const char *prefix, *reason; } starts[] = {
        {"superseded", "superseded"},
        {"no such ", "not in the store"},
        {"status ", NULL},               /* "status completed (only failed ...)": now completed */
        {"newest attempt is ", NULL},    /* Alakai: "newest attempt is succeeded" */
    };
    static const char *const budget[] = {"budget exhausted", "no retry budget", "allows no retry",
                                         "not retryable"};
    if (!cap)
        return;
    const char *w = why && *why ? why : "eligibility unknown";
    for (size_t k = 0; k < sizeof budget / sizeof *budget; k++)
        if (strstr(w, budget[k])) {
            snprintf(out, cap, "budget exhausted");
            return;
        }
    for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
        size_t n = strlen(starts[k].prefix);
        if (strncmp(w, starts[k].prefix, n) != 0)
            continue;
        if (starts[k].reason) {
            snprintf(out, cap, "%s", starts[k].reason);
        } else {
            const char *s = w + n;
            snprintf(out, cap, "now %.*s", (int)strcspn(s, " (:;,"), s);
        }
        return;
    }
    /* Tasker's settled states ("complete", "in progress", "enqueued: in flight") and
     * anything else: the words before their figures */
    snprintf(out, cap, "%s", w);
    out[strcspn(out, "(:;,0123456789")] = 0;
    size_t n = strlen(out);
    while (n && out[n - 1] == ' ')
        out[--n] = 0;
}
