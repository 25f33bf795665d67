/* TEMPORARY (pg engineer): weak constructors until the broker's sources land.
 * Delete this file (and its meson line) once redis/rabbit/probe sources exist. */
#include "source.h"

__attribute__((weak)) rd_source *redis_source_new(const rd_source_ctx *ctx) { (void)ctx; return NULL; }
__attribute__((weak)) rd_source *rabbit_source_new(const rd_source_ctx *ctx) { (void)ctx; return NULL; }
__attribute__((weak)) rd_source *probe_source_new(const rd_source_ctx *ctx) { (void)ctx; return NULL; }
