/* The console — placeholder until the UI lands. */
#include "../cli/cli.h"

#include <stdio.h>

int ui_main(const rd_cli *cli)
{
    (void)cli;
    fputs("redrive: the console is not built yet\n", stderr);
    return RD_EXIT_FAIL;
}
