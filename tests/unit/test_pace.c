/* Pacing to a share of a server core (core/pace.h), on a simulated clock. */
#include "pace.h"

#include "check.h"

/* A sweep of `flights` flights, each costing the server `cost` s of CPU and taking `wall`
 * s of wall time, paced at share: the simulated end time. */
static double simulate(double share, double burst, int flights, double cost, double wall)
{
    rd_pace p;
    pace_init(&p, share, burst);
    double now = 100.0;
    for (int i = 0; i < flights; i++) {
        now = pace_next(&p, now);
        pace_spent(&p, now, cost);
        now += wall;
    }
    return now;
}

int main(void)
{
    /* unpaced: back to back */
    CHECK_NEAR(simulate(0, 0, 100, 0.002, 0.003), 100.3);
    /* 25 %: 100 flights of 2 ms CPU = 0.2 s of CPU → at least 0.8 s; wall 3 ms each is less */
    double end = simulate(0.25, 0, 100, 0.002, 0.003);
    CHECK(end - 100.0 >= 0.8 - 0.008 && end - 100.0 <= 0.8 + 0.004);
    /* a share above what the work needs costs nothing: 10 % CPU work at 50 % share */
    CHECK_NEAR(simulate(0.5, 0, 100, 0.0003, 0.003), 100.3);
    /* burst: the first 10 ms of CPU run at once, then the share */
    rd_pace p;
    /* (binary-exact figures: 1/128 s of CPU per flight, a burst of five flights) */
    pace_init(&p, 0.25, 5.0 / 128);
    double now = 0;
    int at_once = 0;
    for (int i = 0; i < 20; i++) {
        double next = pace_next(&p, now);
        if (next <= now)
            at_once++;
        now = next;
        pace_spent(&p, now, 1.0 / 128);
    }
    CHECK(at_once == 6);          /* the first, then five within the burst */
    /* the share measured over a paced run equals the share set (within a flight) */
    pace_init(&p, 0.25, 0);
    now = 0;
    for (int i = 0; i < 1000; i++) {
        now = pace_next(&p, now);
        pace_spent(&p, now, 0.001);
        now += 0.0005;
    }
    double used = pace_share_used(&p, pace_next(&p, now));
    CHECK(used > 0.2499 && used < 0.2501);
    CHECK(pace_share_used(&p, now) < 0.2503);
    /* an idle pause is not banked beyond the burst: after 10 s idle, pacing resumes */
    now += 10;
    int quick = 0;
    for (int i = 0; i < 10; i++) {
        double next = pace_next(&p, now);
        quick += next <= now;
        now = next;
        pace_spent(&p, now, 0.001);
    }
    CHECK(quick == 1);
    /* clamps and the state before any flight */
    pace_init(&p, 3.0, -1);
    CHECK_NEAR(p.share, 1.0);
    CHECK_NEAR(p.burst, 0.0);
    CHECK_NEAR(pace_share_used(&p, 5), 0.0);
    CHECK_NEAR(pace_next(&p, 5), 5.0);
    pace_spent(&p, 5, -1);        /* a negative cost counts as none */
    CHECK_NEAR(p.spent, 0.0);
    return check_done("pace");
}
