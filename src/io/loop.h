#pragma once
/*
 * Running the event loop: every binary's one loop goes through loop_run.
 *
 * With REDRIVE_LOOP_TRACE=FILE in the environment (benchmarks and CI gates only), the loop
 * runs one iteration at a time and measures the CPU each took: everything its callbacks did
 * between two waits, which is the longest a key press can wait behind them. When the loop
 * ends, FILE gets a line per iteration above 1 ms of CPU (the first 1,000), then a summary:
 *   slow at T cpu_ms X          (T: CLOCK_MONOTONIC seconds at the iteration's end)
 *   iterations N cpu_max_ms X cpu_p99_ms Y over_1ms K
 * Without the variable it is event_base_dispatch.
 */
struct event_base;

int loop_run(struct event_base *base);
