/* The console's one table of views (view.h, view_ops): every ui_view_id has ops, its
 * name is the command that opens it, and its snapshot view is one core/views.h knows. */
#include <stdio.h>
#include <string.h>

#include "../../src/core/views.h"
#include "check.h"
#include "cmd.h"
#include "view.h"

static void test_table(void)
{
    for (int i = 0; i < VIEW__COUNT; i++) {
        const ui_view_ops *ops = view_ops((ui_view_id)i);
        CHECK(ops != NULL);
        if (!ops)
            continue;
        char arg[64], err[128], line[64];
        snprintf(line, sizeof line, "%s x", ops->name);   /* x: the commands that need an argument */
        ui_cmd_id id = cmd_parse(line, arg, sizeof arg, err, sizeof err);
        CHECK(id != CMD_NONE);
        CHECK(id != CMD_NONE && strcmp(cmd_info(id)->name, ops->name) == 0);
        CHECK(view_named(ops->name) == (ui_view_id)i);
        CHECK(ops->panels >= PANELS_ALL && ops->panels <= PANELS_KEEP);
        if (ops->snapshot) {
            const rd_view *v = view_find(ops->snapshot);
            CHECK(v != NULL && v->listed);
        }
    }
    CHECK(view_ops(VIEW__COUNT) == NULL);
    CHECK(view_named("nope") == VIEW__COUNT);
    /* the lists on screen, as the sources were told before the table (binding.c) */
    CHECK(view_ops(VIEW_OVERVIEW)->panels == PANELS_WORKERS);
    CHECK(view_ops(VIEW_HISTORY)->panels == PANELS_WORKERS);
    CHECK(view_ops(VIEW_CHAIN)->panels == PANELS_EXECS);
    CHECK(view_ops(VIEW_GROUPS)->panels == PANELS_EXECS);
    CHECK(view_ops(VIEW_DETAIL)->panels == PANELS_NONE);
    CHECK(view_ops(VIEW_JOURNAL)->panels == PANELS_KEEP);
    CHECK(view_ops(VIEW_DRAIN)->panels == PANELS_ALL);
    CHECK(view_ops(VIEW_FLEET)->panels == PANELS_ALL);
    CHECK(strcmp(view_ops(VIEW_DETAIL)->snapshot, "execution") == 0);
    CHECK(view_ops(VIEW_HELP)->snapshot == NULL);
}

int main(void)
{
    test_table();
    return check_done("views");
}
