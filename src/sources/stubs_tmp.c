/* TEMPORARY (pg engineer): weak constructor until the broker's probe source lands.
 * Delete this file (and its meson line) once probe_source.c exists. */
#include "source.h"

__attribute__((weak)) rd_source *probe_source_new(const rd_source_ctx *ctx)
{
    (void)ctx;
    return NULL;
}
