/* Pacing to a share of a server core (pace.h). */
#include "pace.h"

void pace_init(rd_pace *p, double share, double burst)
{
    p->share = share > 1 ? 1 : share < 0 ? 0 : share;
    p->burst = burst < 0 ? 0 : burst;
    p->tat = 0;
    p->spent = 0;
    p->started = -1;
}

double pace_next(const rd_pace *p, double now)
{
    if (p->share <= 0 || p->started < 0)
        return now;
    /* the flight may start when it is at most `burst` of CPU (burst / share of time)
       ahead of the share */
    double at = p->tat - p->burst / p->share;
    return at > now ? at : now;
}

void pace_spent(rd_pace *p, double start, double cost)
{
    if (cost < 0)
        cost = 0;
    if (p->started < 0) {
        p->started = start;
        p->tat = start;
    }
    p->spent += cost;
    if (p->share <= 0)
        return;
    double from = p->tat > start ? p->tat : start;
    p->tat = from + cost / p->share;
}

double pace_share_used(const rd_pace *p, double now)
{
    if (p->started < 0 || now <= p->started)
        return 0;
    return p->spent / (now - p->started);
}
