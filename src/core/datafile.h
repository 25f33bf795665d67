#pragma once
/*
 * The one lookup of data files (profiles, themes, keymaps). A name is NAME.EXT searched in,
 * first found:
 *   1. $REDRIVE_PROFILES / $REDRIVE_THEMES / $REDRIVE_KEYMAPS   (tests, one-off overrides)
 *   2. the user's dir: $XDG_CONFIG_HOME/redrive/KIND (default ~/.config/redrive/KIND)
 *   3. the source tree RD_SRCDIR/KIND, ONLY when this binary is the one in the build tree
 *      (a developer build tests its own files, and an installed binary never reads a
 *      checkout that happens to sit at the build path)
 *   4. the installed data dir RD_DATADIR/KIND
 * A path (contains '/' or ends in .EXT) is taken as is.
 */
#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

typedef enum { DATA_PROFILES, DATA_THEMES, DATA_KEYMAPS, DATA__COUNT } rd_datakind;

enum { DATAFILE_MAX_DIRS = 4 };

/* NAME of this kind: true and the file's path in out; false when no directory has it
 * (or the name is neither a path nor a plain name). A path is copied without a check:
 * reading it reports why it cannot be read. */
bool datafile_find(rd_datakind kind, const char *name, char *out, size_t cap);
/* datafile_find() for callers with diagnostics: the path (allocated), or NULL after
 * adding "NAME: theme not found (looked in DIR, DIR, ...)". */
char *datafile_locate(rd_datakind kind, const char *name, rd_diags *d);
/* true when name is taken as a path (contains '/' or ends in the kind's extension). */
bool datafile_is_path(rd_datakind kind, const char *name);
/* A name datafile_find() looks up in the directories: letters, digits, '-', '_' and '.'
 * only (not "." or ".."), so never a path, a blank or a control byte. */
bool datafile_plain_name(const char *s);
/* The directories searched, in order (allocated, NULL-terminated; free with
 * datafile_dirs_free). */
size_t datafile_dirs(rd_datakind kind, char *dirs[DATAFILE_MAX_DIRS + 1]);
void datafile_dirs_free(char *dirs[DATAFILE_MAX_DIRS + 1]);
/* "dir1, dir2, ..." for a not-found message. */
void datafile_places(rd_datakind kind, char *out, size_t cap);
/* $XDG_CONFIG_HOME/redrive/SUB (absolute XDG only), else ~/.config/redrive/SUB; HOME
 * from the password database when unset. Allocated. */
char *datafile_user_path(const char *sub);
/* true when exe (a resolved path) lies inside builddir. Pure: the test of the rule. */
bool datafile_in_tree(const char *exe, const char *builddir);
/* true when this process's binary lies inside the build tree it was compiled in. */
bool datafile_dev_build(void);
/* Data files are read with text_read_file_len (textutil.h), capped at: */
enum { DATAFILE_MAX_BYTES = 1 << 20 };
