#pragma once
/*
 * The one table of snapshot views: `snapshot --view`, the JSON and text renderers
 * (model_json.c, model_text.c), `:export` (export.c), `--help` and the shell completions
 * (`redrive --complete views`) all read it; a view added here is known everywhere.
 *
 * mask: the model's parts the view shows (VPART_* bits). The JSON writer emits those
 * arrays; the text writer prints one table per bit in a fixed order (model_text.c), so
 * the mask is also the view's text renderer; the CSV export writes the one data part.
 * A view with mask 0 is not one system's model (fleet: every configured system).
 */
#include <stdbool.h>
#include <stddef.h>

enum {
    VPART_SOURCES = 1, VPART_COUNTS = 2, VPART_EXECS = 4, VPART_WORKERS = 8, VPART_QUEUES = 16,
    VPART_DLQ = 32, VPART_CHAIN = 64, VPART_GROUPS = 128 /* not in "all": derived, not loaded */,
    VPART_DLQ_TOTALS = 256 /* each source's DLQ total, no entries: the last-known cache only */,
    VPART_HISTORY = 512 /* the last hour (core/history.h): not the model's; snapshot reads its file */,
    VPART_DETAIL = 1024 /* one execution in full (detail.h) */
};

typedef struct rd_view {
    const char *name;
    unsigned mask;
    bool needs_id;      /* `--view chain ID` */
    bool exportable;    /* `:export csv|json` has a table for it */
    bool listed;        /* a user's view (--help, completions); false: internal JSON masks */
    const char *help;   /* one line for --help and the completions */
} rd_view;

/* The view called name, NULL when there is none. */
const rd_view *view_find(const char *name);
/* The i-th view of the table (listed or not), NULL past the end. */
const rd_view *view_at(size_t i);
/* "a, b, c": the names of the listed views (exportable only when export_only), into buf;
 * the names that do not fit are left out whole. */
void view_names(char *buf, size_t cap, bool export_only);
