/* The one table of the console's views (view.h): one ui_view_ops per ui_view_id. Below
 * everything that asks a view's ops by id (binding.c's panels, app_ctx.c's views, the
 * command that opens one). */
#include <string.h>

#include "view.h"

static const ui_view_ops *const view_table[] = {
    [VIEW_OVERVIEW] = &view_overview_ops, [VIEW_EXECS] = &view_execs_ops,
    [VIEW_CHAIN] = &view_chain_ops,       [VIEW_WORKERS] = &view_workers_ops,
    [VIEW_QUEUES] = &view_queues_ops,     [VIEW_DLQ] = &view_dlq_ops,
    [VIEW_JOURNAL] = &view_journal_ops,   [VIEW_HELP] = &view_help_ops,
    [VIEW_FLEET] = &view_fleet_ops,
    [VIEW_GROUPS] = &view_groups_ops,
    [VIEW_DRAIN] = &view_drain_ops,
    [VIEW_HISTORY] = &view_history_ops,
    [VIEW_DETAIL] = &view_detail_ops,
    [VIEW_BATCHES] = &view_batches_ops,
};
_Static_assert(sizeof view_table / sizeof *view_table == VIEW__COUNT, "one ops for each ui_view_id");

const ui_view_ops *view_ops(ui_view_id id)
{
    return id >= 0 && id < VIEW__COUNT ? view_table[id] : NULL;
}

ui_view_id view_named(const char *name)
{
    for (int i = 0; name && i < VIEW__COUNT; i++)
        if (strcmp(view_table[i]->name, name) == 0)
            return (ui_view_id)i;
    return VIEW__COUNT;
}
