/* redrive --version: the version, the commit it was built from, the optional parts and the
 * libraries it was built against. Only strings fixed at build time: printing them loads
 * none of the lazily loaded libraries (src/io/lazylib.c). */
#include "cli.h"

#include <stdio.h>

#include "../core/testhook.h"
#include "rd_build.h"
#include "rd_vcs.h"

int cli_version(void)
{
    printf("redrive %s\n"
           "git: %s\n"
           "TLS bridge: %s\n"
           "AWS signer: %s\n"
           "libraries: %s\n"
           "test hooks: %s\n",
           RD_VERSION, RD_GIT_DESCRIBE, RD_TLS_BRIDGE, RD_AWS_SIGNER, RD_LIBS,
           testhook_enabled() ? "on" : "off");
    return fflush(stdout) == 0 && !ferror(stdout) ? RD_EXIT_OK : RD_EXIT_FAIL;
}
