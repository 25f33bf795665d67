#pragma once
/*
 * What stands out about an error group (issue 36, docs/error-groups.md "What stands
 * out"): the dimensions — worker, action, queue, attempt, host, version, tag — on which
 * the group's failures are spread differently from every execution of the same window.
 *
 * The window's baseline (so_base) is one grouped read per window, where the data is (a
 * PostgreSQL profile's [query groups_window], the Alakai index in C); the group's own
 * counts come from the rows the groups are made of (storegroups.c). A value is listed
 * only when it is a real difference: at least SO_MIN_MEMBERS of the group's failures and
 * SO_MIN_SHARE of them have it, and its share of the group is at least SO_MIN_LIFT times
 * its share of the window's other executions (the window less the group's own failures:
 * an incident that is most of its window still shows what sets it apart). Fewer than
 * SO_MIN_WINDOW other executions are not compared (said, never a number made up). Pure:
 * no I/O, no clock.
 */
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SO_WORKER, SO_ACTION, SO_QUEUE, SO_ATTEMPT, SO_HOST, SO_VERSION, SO_TAG, SO_NDIM
} so_dim;

enum { SO_MIN_MEMBERS = 5, SO_MIN_WINDOW = 20, SO_MAX = 6 };
#define SO_MIN_SHARE 0.20
#define SO_MIN_LIFT 2.0

const char *so_dim_name(so_dim d);             /* "worker", "action", ... */
bool so_dim_parse(const char *name, so_dim *d);

/* Why a group's list is what it is. */
typedef enum {
    SO_UNKNOWN = 0,    /* no baseline: the profile reads none, or it failed */
    SO_LISTED,         /* compared: the list (empty = spread like its window) */
    SO_FEW_WINDOW,     /* the window has fewer than SO_MIN_WINDOW executions */
    SO_FEW_MEMBERS,    /* the group has fewer than SO_MIN_MEMBERS failures */
} so_state;

typedef struct rd_standout {
    so_dim dim;
    char *value;               /* raw (owned): sanitize before display */
    size_t n_group, n_window;  /* failures of the group / executions of the window with it */
    double in_group;           /* share of the group's failures */
    double in_window;          /* share of the window's other executions (n_window - n_group
                                * of the window's executions less the group's) */
    double lift;               /* in_group / in_window; INFINITY: none of the others has it */
} rd_standout;

/* (dimension, value) → count, for a group or a window. */
typedef struct so_counts so_counts;
so_counts *so_counts_new(void);
void so_counts_free(so_counts *c);
void so_counts_add(so_counts *c, so_dim d, const char *value, size_t n);   /* NULL/"" ignored */
/* After the adds: merged and sorted, so_counts_get answers. */
void so_counts_finish(so_counts *c);
size_t so_counts_get(const so_counts *c, so_dim d, const char *value);
/* Calls fn for every cell (after so_counts_finish: sorted and merged). */
void so_counts_each(const so_counts *c, void (*fn)(so_dim d, const char *value, size_t n, void *ud), void *ud);

/* The window's baseline. */
typedef struct so_base so_base;
so_base *so_base_new(void);
void so_base_free(so_base *b);
void so_base_add(so_base *b, so_dim d, const char *value, size_t n);   /* d is recorded */
void so_base_recorded(so_base *b, so_dim d);    /* recorded, even with no value counted */
/* A worker's host (from the worker's own row): the host dimension is derived from the
 * workers, for the window and every group alike. */
void so_base_host(so_base *b, const char *worker, const char *host);
void so_base_total(so_base *b, size_t total, bool capped);
void so_base_finish(so_base *b);
size_t so_base_executions(const so_base *b);
bool so_base_capped(const so_base *b);
bool so_base_records(const so_base *b, so_dim d);
const char *so_base_host_of(const so_base *b, const char *worker);   /* NULL unknown */

/* The group's list against the window: group holds its failures' counts (finished),
 * members how many failures it has. Ranked by lift, then share of the group; at most
 * SO_MAX. A host that names exactly the same failures as a listed worker is left out
 * (one fact, said once). *out owned (so_list_free). */
so_state so_compute(const so_base *b, const so_counts *group, size_t members,
                    rd_standout **out, size_t *n);
void so_list_free(rd_standout *l, size_t n);

/* "90 % on worker 7 (2.5 % of the hour)", "60 % ingest.parse (17 %)" (brief: the
 * window named once, with the first item), the value sanitized and cut to 32 columns. */
void so_item_text(const rd_standout *s, double window_s, bool first, char *out, size_t cap);
/* What a state other than a non-empty list says: "nothing stands out: spread like its
 * window", "too few executions in the window to compare (12 < 20)", ... */
void so_state_text(so_state st, const so_base *b, size_t members, char *out, size_t cap);
