#pragma once
/*
 * Test hooks: the REDRIVE_* environment variables that let the test suite and the
 * benchmarks drive the console (a fixed model, a fixed clock, keys, trace files). They
 * exist only in a build configured with `-Dtest_hooks=true` (meson_options.txt:
 * scripts/setup.sh and the test and bench builds turn it on; the package build does not).
 * Elsewhere testhook_env() is NULL for every name, so an installed binary ignores them.
 */
#include <stdbool.h>
#include <stdio.h>

/* Whether this binary honours the hooks (`redrive --version` says so). */
bool testhook_enabled(void);
/* getenv(name) in a build with the hooks, NULL otherwise. */
const char *testhook_env(const char *name);
/* A trace file named by a hook, opened to append: never through a symlink (O_NOFOLLOW), and
 * only a regular file of this user with one link (a trace names a fresh path or a file the
 * same tests made), else NULL. truncate: emptied once checked. */
FILE *testhook_trace_open(const char *path, bool truncate);
