/* What every source shares (source.h), below sources.c, which makes them: the poll
 * timer re-armed at a new pace. */
#include "source.h"

#include <event2/event.h>

#include "../io/clock.h"

void source_rearm(struct event *ev, double every)
{
    if (!evtimer_pending(ev, NULL))
        return;
    struct timeval tv = clock_tv(every);
    evtimer_add(ev, &tv);
}
