#pragma once
/*
 * The event loop, the only door to libevent: no file outside src/io includes event2/ or
 * calls event_* / evtimer_* (tests/unit/test_no_libevent.py checks it).
 *
 *   rd_loop *l = loop_new();                       keys-first priorities, dispatch slices
 *   rd_event *t = loop_timer_new(l, on_tick, ud);  a one-shot timer, not armed
 *   loop_timer_in(t, 2.5);                         runs on_tick in 2.5 s (re-arming moves it)
 *   loop_run(l);                                   until loop_break / loop_exit / no events
 *   loop_event_free(t); loop_free(l);
 *
 * Every callback is loop_cb(fd, what, ud): fd and what (LOOP_READ, LOOP_WRITE,
 * LOOP_TIMEOUT, LOOP_SIGNAL) matter to fd and signal events only.
 *
 * Priorities: a loop from loop_new has two, LOOP_PRIO_KEYS before LOOP_PRIO_WORK (the
 * default of every event). A turn of work stops after LOOP_SLICE_MS or LOOP_SLICE_CBS
 * callbacks to look for new input, so a key waits for one callback at most, not for a
 * wave of answers from the fleet. loop_event_keys puts an event (keys, signals) first.
 *
 * With REDRIVE_LOOP_TRACE=FILE in the environment (benchmarks and CI gates only), loop_run
 * runs one iteration at a time and measures the CPU each took: everything its callbacks did
 * between two waits, which is the longest a key press can wait behind them. Every event
 * made through this header then runs through a wrapper that times its callback (CPU and
 * wall), named by the callback and its file (the macros below pass #cb and __FILE__);
 * hiredis's events and curl's (http.c) are timed too, and code may time a part of a
 * callback with loop_span_begin/loop_span_end. When the loop ends, FILE gets a line per
 * iteration above 1 ms of CPU or of callback wall time (REDRIVE_LOOP_TRACE_MS: another bar,
 * 0 for every iteration; the first 20,000), then a summary (its counts always at 1 ms):
 *   slow at T cpu_ms X wall_ms W preempt P block B minflt F ran NAME:CPU/WALL,... other:CPU
 *     (T: CLOCK_MONOTONIC seconds at the iteration's end; wall_ms: its callbacks' wall
 *     time; P, B, F: involuntary context switches (preempted), voluntary ones (blocked:
 *     a write, a lock) and minor page faults of the loop's thread from its first callback
 *     on; ran: the callbacks and spans that ran in it, costliest first, at most 12,
 *     a span inside a callback written PARENT>NAME; other: the CPU outside every callback,
 *     libevent's own)
 *   iterations N cpu_max_ms X cpu_p99_ms Y over_1ms K wall_over_1ms K2 wall_max_ms W listed L
 *     (L: the lines above it, at most 20,000)
 * A run's lines are made in memory and appended in one write at the loop's end (several
 * runs may share one file).
 */
#include <stdbool.h>

typedef struct event_base rd_loop;     /* opaque outside src/io */
typedef struct event rd_event;         /* a timer, fd or signal event; opaque */
typedef void (*loop_cb)(int fd, short what, void *ud);

enum {
    LOOP_TIMEOUT = 0x01, LOOP_READ = 0x02, LOOP_WRITE = 0x04, LOOP_SIGNAL = 0x08,
    LOOP_PERSIST = 0x10,
};
enum { LOOP_PRIO_KEYS, LOOP_PRIO_WORK, LOOP_PRIO__COUNT, LOOP_SLICE_MS = 5, LOOP_SLICE_CBS = 8 };

rd_loop *loop_new(void);          /* NULL when out of resources */
void loop_free(rd_loop *l);       /* NULL-safe; free the events first */
int loop_run(rd_loop *l);
void loop_break(rd_loop *l);      /* stop after the running callback */
void loop_exit(rd_loop *l);       /* stop after the callbacks already active have run */

/* Timers. loop_timer_new: one shot; loop_every_new: runs every `s` of loop_timer_in(t, s)
 * until stopped. loop_timer_in arms (or re-arms) in s seconds (negative: now, next turn).
 * The *_named functions take the callback's name and file for the loop trace; the macros
 * give them (call the macros). */
rd_event *loop_timer_named(rd_loop *l, loop_cb cb, void *ud, const char *name, const char *file);
rd_event *loop_every_named(rd_loop *l, loop_cb cb, void *ud, const char *name, const char *file);
#define loop_timer_new(l, cb, ud) loop_timer_named((l), (cb), (ud), #cb, __FILE__)
#define loop_every_new(l, cb, ud) loop_every_named((l), (cb), (ud), #cb, __FILE__)
void loop_timer_in(rd_event *t, double s);
void loop_timer_stop(rd_event *t);
bool loop_timer_pending(const rd_event *t);
/* "Run soon": make the event active now, out of the current callback (what = LOOP_TIMEOUT). */
void loop_soon(rd_event *ev);

/* Readiness of fd: what is LOOP_READ and/or LOOP_WRITE, with LOOP_PERSIST to stay armed.
 * Armed at once; NULL when it cannot be (the fd is bad). */
rd_event *loop_fd_named(rd_loop *l, int fd, short what, loop_cb cb, void *ud, const char *name,
                        const char *file);
#define loop_fd_new(l, fd, what, cb, ud) loop_fd_named((l), (fd), (what), (cb), (ud), #cb, __FILE__)
/* Signal signo, persistent, armed at once (fd = signo in the callback). */
rd_event *loop_signal_named(rd_loop *l, int signo, loop_cb cb, void *ud, const char *name,
                            const char *file);
#define loop_signal_new(l, signo, cb, ud) loop_signal_named((l), (signo), (cb), (ud), #cb, __FILE__)

/* The loop trace's spans (REDRIVE_LOOP_TRACE): a part of a callback timed on its own,
 * written NAME inside its callback's entry. Costs two clock reads when tracing, nothing
 * otherwise. name: a string that outlives the loop (a literal). */
typedef struct loop_span { double cpu, wall; bool on; } loop_span;
loop_span loop_span_begin(void);
void loop_span_end(loop_span s, const char *name);
bool loop_tracing(void);
/* cb(fd, what, ud) now, timed as a callback named name when tracing (for the events src/io
 * makes with libevent itself: curl's sockets and timer). */
void loop_call(loop_cb cb, int fd, short what, void *ud, const char *name);

void loop_event_keys(rd_event *ev);    /* run at LOOP_PRIO_KEYS */
void loop_event_free(rd_event *ev);    /* NULL-safe; stops it first */
#define loop_timer_free loop_event_free

/* hiredis's libevent adapter, kept here. loop_redis_attach: 0 on success. The read hook
 * (RD_REDIS_DEBUG timing) has the context's reads call on_read(ac), which must call
 * redisAsyncHandleRead(ac) itself; one on_read serves the whole process (the last given). */
struct redisAsyncContext;
int loop_redis_attach(struct redisAsyncContext *ac, rd_loop *l);
void loop_redis_read_hook(struct redisAsyncContext *ac, rd_loop *l,
                          void (*on_read)(struct redisAsyncContext *ac));
