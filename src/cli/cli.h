#pragma once
/* Global command-line options, parsed once in main.c and passed down. */
#include <stdbool.h>

typedef struct rd_cli {
    const char *config_path;   /* --config, NULL = default path */
    const char *system;        /* --system */
    const char *theme;         /* --theme */
    const char *keymap;        /* --keymap */
    bool read_only;            /* --read-only */
    bool ascii;                /* --ascii */
    bool no_mouse;             /* --no-mouse */
    bool yes;                  /* --yes */
} rd_cli;

/* Subcommands; argv[0] is the subcommand name. Return the process exit code. */
int cmd_snapshot(const rd_cli *cli, int argc, char **argv);              /* cli/snapshot.c */
int cmd_action(const rd_cli *cli, int argc, char **argv);                /* cli/act.c */
int ui_main(const rd_cli *cli);                                          /* ui/app.c */

enum { RD_EXIT_OK = 0, RD_EXIT_FAIL = 1, RD_EXIT_USAGE = 2, RD_EXIT_PARTIAL = 3 };
