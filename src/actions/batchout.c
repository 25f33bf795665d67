/* A batch's figures (batchout.h). */
#include "batchout.h"

#include <stdio.h>
#include <string.h>

void batch_summary_make(const rd_batch_info *b, bool running, const unsigned char *outs,
                        const char *why, rd_batch_summary *s)
{
    memset(s, 0, sizeof *s);
    s->id = b->id;
    s->system = b->system ? b->system : "";
    s->action = b->action ? b->action : "";
    s->selection = b->selection ? b->selection : "";
    s->state = running && !b->abandoned ? "running" : batch_info_state(b);
    s->pause_reason = !strcmp(s->state, "paused") ? b->pause_reason : NULL;
    s->total = b->total;
    s->sent = b->ok + b->failed + b->unknown;
    s->ok = b->ok;
    s->failed = b->failed;
    s->unknown = b->unknown;
    /* a resume holds them back: the unknown (--resend-unknown sends them) and those the
     * guard at send time found no longer eligible (never sent) */
    s->held = b->unknown + b->held;
    s->rate = b->rate;
    s->concurrency = b->concurrency;
    s->outcome_read = outs != NULL;
    s->outcome_why = outs ? NULL : why;
    for (size_t i = 0; outs && i < b->total; i++)
        bout_count(&s->outcome, (rd_bout)outs[i]);
}

void batch_share_line(const rd_bout_counts *c, double max, char *out, size_t cap)
{
    char line[300];
    bout_line(c, line, sizeof line);
    snprintf(out, cap, "%zu of %zu finished retries failed again in the same error group "
             "(%.0f%% %s %.0f%%): %s", c->failed_again, bout_finished(c),
             bout_refail_share(c) * 100, bout_refail_share(c) > max + 1e-9 ? ">" : "<=",
             max * 100, line);
}
