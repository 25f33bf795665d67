#pragma once
/*
 * The one owner/mode check for files and directories redrive trusts, after OpenSSH's:
 * a file whose content runs (`cmd:` in a config) or is a secret (a `file:` secret, a
 * client key, the journal) is refused when someone else could have written or read it.
 * Checks are made on an opened descriptor's stat (fsperm_open), not on the name, so the
 * file checked is the file read. Messages name the path and what is wrong, never content.
 *
 *   owner  the effective user; with FSP_ROOT_OK also root (OpenSSH's rule for configs)
 *   mode   no group/world write (022); with FSP_PRIVATE no group/world access at all (077)
 *   type   a regular file (FSP_REGULAR) or a real directory, not a symlink (FSP_DIR)
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

enum {
    FSP_REGULAR = 1u << 0,   /* must be a regular file (not a FIFO, device, directory) */
    FSP_DIR = 1u << 1,       /* must be a directory */
    FSP_ROOT_OK = 1u << 2,   /* owned by root is trusted too */
    FSP_PRIVATE = 1u << 3,   /* no group/world bits at all (else: no group/world write) */
    FSP_ANYMODE = 1u << 4,   /* no mode rule (a socket's mode says who may send to it) */
    FSP_SOCKET = 1u << 5,    /* must be a socket */
};

/* What a mode is, for a message: "a FIFO", "a directory", "a regular file", ... */
const char *fsperm_kind(mode_t m);
/* true (and why: "WHAT PATH is owned by uid 65534, not by you (uid 0)") when st breaks
 * the rules; what names the file's role ("config file", "secret file", "journal"). */
bool fsperm_refused(const struct stat *st, const char *what, const char *path, unsigned rules,
                    char *why, size_t whycap);
/* open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode) then the check on the
 * descriptor: a FIFO never blocks the open, a terminal never becomes ours. The fd, or -1
 * with why ("cannot open WHAT PATH: ..." or the refusal); *st_out gets the stat (may be
 * NULL). errno is kept from a failed open (ENOENT: no such file). */
int fsperm_open(const char *path, int flags, unsigned mode, const char *what, unsigned rules,
                struct stat *st_out, char *why, size_t whycap);
/* fsperm_open(path, O_RDONLY) and close: whether a file read by name elsewhere (a TLS
 * client key, read by the TLS library) passes the rules. */
bool fsperm_check_file(const char *path, const char *what, unsigned rules, char *why,
                       size_t whycap);
/* mkdir -p of dir, each missing directory created 0700; true when dir exists after. */
bool fsperm_mkdirs(const char *dir, char *why, size_t whycap);
/* dir itself (lstat: a symlink is refused) against the rules with FSP_DIR. */
bool fsperm_dir_ok(const char *dir, const char *what, unsigned rules, char *why, size_t whycap);

/*
 * Every directory on the way (OpenSSH's safe_path): from / down to the last directory
 * above path, each must be a real directory owned by you or root that nobody else can
 * write. One exception, a sticky directory owned by root (/tmp, mode 1777): there nobody
 * else can rename or remove an entry that is not theirs, and the entry below is checked
 * in its turn (so /tmp/x of yours passes, /tmp/x of another user's does not). A symlinked
 * directory is checked where it leads (its real path, every directory of it). A missing
 * directory ends the walk (it is made by us, 0700). why: "WHAT PATH: the directory D is
 * owned by uid 65534, not by you (uid 0) or root".
 */
bool fsperm_parents_ok(const char *path, const char *what, char *why, size_t whycap);  /* errno EPERM when false */
/* path itself (rules, as fsperm_refused) and every directory on the way to it
 * (fsperm_parents_ok); a symlink is checked where it leads, its real path's directories
 * too. false with why; errno ENOENT when path (or a directory of it) is missing. */
bool fsperm_path_ok(const char *path, const char *what, unsigned rules, char *why,
                    size_t whycap);
/* A socket that gets what redrive sends (journal_syslog): whoever bound it reads every
 * line, so it must be yours or root's (any mode: its mode says who may send), and every
 * directory on the way trusted, so nobody else can put theirs in its place. /dev/log
 * (root's, in root's /dev; or its symlink into /run) passes; a socket in /tmp passes only
 * when it is yours or root's. */
bool fsperm_socket_ok(const char *path, char *why, size_t whycap);
/* A directory redrive keeps files in (state, cache, batches): its parents checked
 * (fsperm_parents_ok), then made (fsperm_mkdirs), then every directory again and dir
 * itself (fsperm_dir_ok: ours, a real directory, nobody else can write it). */
bool fsperm_dir_ready(const char *dir, const char *what, char *why, size_t whycap);
/* The same checks for a directory that is read, not made: a missing dir passes when its
 * parents do (there is nothing to read). */
bool fsperm_dir_trusted(const char *dir, const char *what, char *why, size_t whycap);
