/* redrive snapshot — placeholder until the data layer lands. */
#include "cli.h"

#include <stdio.h>

int cmd_snapshot(const rd_cli *cli, int argc, char **argv)
{
    (void)cli; (void)argc; (void)argv;
    fputs("redrive: snapshot is not built yet\n", stderr);
    return RD_EXIT_FAIL;
}
