/* A batch's outcome followed (session.h: outtrack, issue 35): each item the core accepted,
 * read from the store a page at a time through the sources' reader (sources.h: outread)
 * from the batch record's stream (memory: one page, whatever the batch's size). */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "../actions/batchrec.h"
#include "../core/xalloc.h"

enum { OUT_PAGE = 500 };

struct rd_outtrack {
    rd_outread *rd;
    size_t total;
    char *path;                   /* the record: its items are read again at each refresh */
    unsigned char *outs;          /* rd_bout, by number */
    unsigned char *mine;          /* accepted in this run (outtrack_mark_ok) */
    size_t cursor;                /* where the next refresh starts (round robin) */
};

rd_outtrack *outtrack_new(const rd_system_cfg *c, const rd_profile *prof, const rd_batch_info *b,
                          const char *journal, char *why, size_t cap)
{
    if (!c || !prof) {
        snprintf(why, cap, "no system profile to read the outcome with");
        return NULL;
    }
    unsigned char *st = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0;
    if (!batchrec_states(journal, b, &st, &keys, &nkeys, why, cap))
        return NULL;
    free(keys);
    rd_outtrack *t = xcalloc(1, sizeof *t);
    t->rd = outread_new(c, prof);
    t->total = b->total;
    t->path = xstrdup(b->path);
    t->outs = xcalloc(b->total ? b->total : 1, 1);
    t->mine = xcalloc(b->total ? b->total : 1, 1);
    for (size_t i = 0; i < b->total; i++)
        t->outs[i] = st[i] == BITEM_OK ? BOUT_UNREAD : BOUT_NONE;
    free(st);
    return t;
}

void outtrack_mark_ok(rd_outtrack *t, size_t item)
{
    if (!t || item >= t->total)
        return;
    if (t->outs[item] == BOUT_NONE)
        t->outs[item] = BOUT_UNREAD;
    t->mine[item] = 1;
}

/* A page of items to read: their targets copied out of the record stream. */
typedef struct page {
    rd_outread_item it[OUT_PAGE];
    unsigned char out[OUT_PAGE];
    size_t num[OUT_PAGE];
    size_t n;
} page;

static void page_clear(page *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)(uintptr_t)p->it[i].id);
        free((char *)(uintptr_t)p->it[i].fp);
    }
    p->n = 0;
}

static bool page_send(rd_outtrack *t, page *p, char *why, size_t cap)
{
    for (size_t i = 0; i < p->n; i++)
        p->out[i] = t->outs[p->num[i]];
    bool ok = outread_page(t->rd, p->it, p->n, p->out, why, cap);
    for (size_t i = 0; ok && i < p->n; i++)
        t->outs[p->num[i]] = p->out[i];
    page_clear(p);
    return ok;                        /* failed: the outcomes read so far stay */
}

static bool wanted(const rd_outtrack *t, size_t i)
{
    return i < t->total && t->outs[i] != BOUT_NONE && !bout_final((rd_bout)t->outs[i]);
}

bool outtrack_refresh(rd_outtrack *t, size_t max_pages, char *why, size_t cap)
{
    size_t left = 0;
    for (size_t i = 0; i < t->total; i++)
        left += wanted(t, i);
    if (!left)
        return true;
    if (!outread_page(t->rd, NULL, 0, NULL, why, cap))   /* connected first */
        return false;
    page *p = xcalloc(1, sizeof *p);
    size_t pages = 0, last = t->cursor;
    bool ok = true, more = true;
    /* two passes over the record: from the cursor to the end, then from the start */
    for (int pass = 0; ok && more && pass < 2; pass++) {
        rd_batchrd *rd = batchrd_open(t->path, why, cap);
        if (!rd) {
            ok = false;
            break;
        }
        size_t item;
        rd_target x;
        while (more && batchrd_next(rd, &item, &x)) {
            if ((pass == 0) != (item >= t->cursor) || !wanted(t, item))
                continue;
            p->it[p->n] = (rd_outread_item){.id = xstrdup(x.id),
                                            .fp = x.fp ? xstrdup(x.fp) : NULL,
                                            .attempt = x.attempt};
            p->num[p->n++] = item;
            last = item + 1;
            if (p->n == OUT_PAGE) {
                ok = page_send(t, p, why, cap);
                more = ok && (!max_pages || ++pages < max_pages);
            }
        }
        batchrd_close(rd);
        if (pass == 0 && !t->cursor)
            break;                    /* the first pass was the whole record */
    }
    if (ok && p->n)
        ok = page_send(t, p, why, cap);
    page_clear(p);
    free(p);
    t->cursor = last < t->total ? last : 0;
    return ok;
}

const unsigned char *outtrack_outs(const rd_outtrack *t)
{
    return t->outs;
}

rd_bout_counts outtrack_counts(const rd_outtrack *t, bool this_run)
{
    rd_bout_counts c = {0};
    for (size_t i = 0; i < t->total; i++)
        if (!this_run || t->mine[i])
            bout_count(&c, (rd_bout)t->outs[i]);
    return c;
}

size_t outtrack_queries(const rd_outtrack *t)
{
    return outread_queries(t->rd);
}

void outtrack_free(rd_outtrack *t)
{
    if (!t)
        return;
    outread_free(t->rd);
    free(t->path);
    free(t->outs);
    free(t->mine);
    free(t);
}

/* ---- the guard at send time ---------------------------------------------------------- */

struct rd_recheck {
    rd_outread *rd;
};

rd_recheck *recheck_new(const rd_system_cfg *c, const rd_profile *prof)
{
    rd_recheck *k = xcalloc(1, sizeof *k);
    k->rd = outread_new(c, prof);
    return k;
}

bool recheck_verdicts(rd_recheck *k, const rd_target *t, size_t n, rd_verdict *out, char *why,
                      size_t cap)
{
    if (!n)
        return outread_verdicts(k->rd, NULL, 0, NULL, why, cap);   /* connects only */
    rd_outread_item it[OUT_PAGE];
    for (size_t at = 0; at < n; at += OUT_PAGE) {
        size_t m = n - at < OUT_PAGE ? n - at : OUT_PAGE;
        for (size_t i = 0; i < m; i++)
            it[i] = (rd_outread_item){.id = t[at + i].id, .fp = t[at + i].fp,
                                      .attempt = t[at + i].attempt};
        if (!outread_verdicts(k->rd, it, m, out + at, why, cap))
            return false;
    }
    return true;
}

size_t recheck_queries(const rd_recheck *k)
{
    return outread_queries(k->rd);
}

void recheck_free(rd_recheck *k)
{
    if (!k)
        return;
    outread_free(k->rd);
    free(k);
}
