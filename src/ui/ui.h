#pragma once
/* The console as the command line sees it: run it with the global options. */
#include "../session/session.h"

int ui_main(const rd_opts *opts);   /* returns the process exit code */
