#include "guard.h"

#include <stdio.h>

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
