/* The Redis sweep's cost readings (src/sources/redis_cost.c): INFO commandstats and
 * INFO cpu as the server writes them, read into the figures the budget is calibrated with. */
#include <string.h>

#include "../../src/sources/redis_cost.h"
#include "check.h"

int main(void)
{
    static const char stats[] =
        "# Commandstats\r\n"
        "cmdstat_scan:calls=400,usec=60000,usec_per_call=150.00,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_hgetall:calls=100000,usec=150000,usec_per_call=1.50,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_info:calls=12,usec=480,usec_per_call=40.00,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_hlen:calls=100001,usec=50000,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_hset:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n"
        "cmdstat_client|setname:calls=1,usec=2,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n";
    static const char cpu[] =
        "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\n"
        "used_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n";
    rs_cost_sample s;
    CHECK(rs_cost_parse(stats, cpu, &s));
    CHECK_NEAR(s.calls[RS_CMD_SCAN], 400);
    CHECK_NEAR(s.usec[RS_CMD_SCAN], 60000);
    CHECK_NEAR(s.calls[RS_CMD_HGETALL], 100000);
    CHECK_NEAR(s.usec[RS_CMD_HGETALL], 150000);
    CHECK_NEAR(s.calls[RS_CMD_INFO], 12);
    CHECK_NEAR(s.calls[RS_CMD_HLEN], 100001);                /* each key's size first */
    CHECK_NEAR(s.usec[RS_CMD_HLEN], 50000);
    CHECK_NEAR(s.usec_all, 60000 + 150000 + 480 + 50000 + 70 + 2);   /* every command's time */
    CHECK_NEAR(s.cpu, 3.75);                                 /* user + sys, not children */
    /* one part alone; an ACL refusal (no text) or unknown text says nothing */
    CHECK(rs_cost_parse(NULL, cpu, &s) && s.usec_all == 0 && s.cpu > 3.7);
    CHECK(rs_cost_parse(stats, NULL, &s) && s.cpu == 0);
    CHECK(!rs_cost_parse(NULL, NULL, &s));
    CHECK(!rs_cost_parse("# Commandstats\r\ncmdstat_scan:bogus\r\n", "# CPU\r\n", &s));
    /* a name that only starts like ours is not ours */
    CHECK(rs_cost_parse("cmdstat_scanx:calls=5,usec=9,usec_per_call=1.8\n", NULL, &s));
    CHECK_NEAR(s.calls[RS_CMD_SCAN], 0);
    CHECK_NEAR(s.usec_all, 9);
    return check_done("redis_cost");
}
