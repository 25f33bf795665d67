/* redrive retry/drain/... — placeholder until the action layer lands. */
#include "cli.h"

#include <stdio.h>

int cmd_action(const rd_cli *cli, int argc, char **argv)
{
    (void)cli; (void)argc; (void)argv;
    fputs("redrive: actions are not built yet\n", stderr);
    return RD_EXIT_FAIL;
}
