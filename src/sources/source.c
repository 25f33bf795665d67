/* What every source shares (source.h), below sources.c, which makes them: the poll
 * timer re-armed at a new pace. */
#include "source.h"

#include "../io/loop.h"

void source_rearm(rd_event *ev, double every)
{
    if (!loop_timer_pending(ev))
        return;
    loop_timer_in(ev, every);
}
