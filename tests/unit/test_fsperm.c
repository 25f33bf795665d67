/* The one owner/mode rule (core/fsperm.h): one row per boundary. The stat is made up, so
 * every owner and type is tried whoever runs the test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "fsperm.h"

enum { ME = -1, ROOT = 0, OTHER = 65534 };

static void test_rules(void)
{
    const unsigned SECRET = FSP_REGULAR | FSP_PRIVATE, CONFIG = FSP_REGULAR | FSP_ROOT_OK;
    static const char *const ok = NULL;
    struct {
        mode_t mode;
        int owner;
        unsigned rules;
        const char *want;   /* the message after "WHAT /p ", NULL = accepted */
    } cases[] = {
        {S_IFREG | 0600, ME, 0, ok},
        {S_IFREG | 0600, ME, SECRET, ok},
        {S_IFREG | 0400, ME, SECRET, ok},
        {S_IFREG | 0640, ME, SECRET, "is group/world readable or writable (mode 640): chmod 600 it"},
        {S_IFREG | 0604, ME, SECRET, "is group/world readable or writable (mode 604): chmod 600 it"},
        {S_IFREG | 0644, ME, CONFIG, ok},                    /* a config may be readable */
        {S_IFREG | 0664, ME, CONFIG, "is group/world writable (mode 664): chmod go-w it"},
        {S_IFREG | 0602, ME, CONFIG, "is group/world writable (mode 602): chmod go-w it"},
        {S_IFREG | 0666, ME, CONFIG, "is group/world writable (mode 666): chmod go-w it"},
        {S_IFIFO | 0600, ME, SECRET, "is not a regular file (a FIFO)"},
        {S_IFCHR | 0600, ME, CONFIG, "is not a regular file (a device)"},
        {S_IFDIR | 0700, ME, SECRET, "is not a regular file (a directory)"},
        {S_IFSOCK | 0600, ME, SECRET, "is not a regular file (a socket)"},
        {S_IFDIR | 0700, ME, FSP_DIR, ok},
        {S_IFDIR | 0755, ME, FSP_DIR, ok},                   /* readable: fine, writable: not */
        {S_IFDIR | 0775, ME, FSP_DIR, "is group/world writable (mode 775): chmod go-w it"},
        {S_IFDIR | 0777, ME, FSP_DIR, "is group/world writable (mode 777): chmod go-w it"},
        {S_IFLNK | 0777, ME, FSP_DIR, "is not a directory (a symbolic link)"},
        {S_IFREG | 0600, ME, FSP_DIR, "is not a directory (a regular file)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct stat st = {0};
        st.st_mode = cases[i].mode;
        st.st_uid = cases[i].owner == ME ? geteuid() : (uid_t)cases[i].owner;
        char why[300] = "", want[300] = "", ctx[40];
        bool refused = fsperm_refused(&st, "file", "/p", cases[i].rules, why, sizeof why);
        snprintf(ctx, sizeof ctx, "case %zu", i);
        CHECK_MSG(refused == (cases[i].want != NULL), ctx);
        if (cases[i].want) {
            snprintf(want, sizeof want, "file /p %s", cases[i].want);
            CHECK_STR(why, want);
        }
    }
}

/* Owners: ours always; root only where FSP_ROOT_OK says (and root is "us" for root). */
static void test_owners(void)
{
    uid_t me = geteuid();
    struct stat st = {0};
    char why[300], want[300];
    st.st_mode = S_IFREG | 0600;
    st.st_uid = OTHER == me ? OTHER + 1 : OTHER;
    CHECK(fsperm_refused(&st, "config file", "/c", FSP_REGULAR | FSP_ROOT_OK, why, sizeof why));
    snprintf(want, sizeof want, "config file /c is owned by uid %u, not by you (uid %u)%s",
             (unsigned)st.st_uid, (unsigned)me, me ? " or root" : "");
    CHECK_STR(why, want);
    CHECK(fsperm_refused(&st, "secret file", "/s", FSP_REGULAR | FSP_PRIVATE, why, sizeof why));
    snprintf(want, sizeof want, "secret file /s is owned by uid %u, not by you (uid %u)",
             (unsigned)st.st_uid, (unsigned)me);
    CHECK_STR(why, want);
    st.st_uid = ROOT;
    CHECK(!fsperm_refused(&st, "config file", "/c", FSP_REGULAR | FSP_ROOT_OK, why, sizeof why));
    CHECK(fsperm_refused(&st, "secret file", "/s", FSP_REGULAR, why, sizeof why) == (me != 0));
}

/* ---- every directory on the way (fsperm_parents_ok, fsperm_dir_ready) ---- */

static char base[64];

static char *at(const char *rel)
{
    static char buf[4][256];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", base, rel);
    return b;
}

static void expect(const char *dir, const char *want_tail)
{
    char why[512] = "", want[512];
    bool ok = fsperm_dir_ready(dir, "state directory", why, sizeof why);
    CHECK_MSG(ok == (want_tail == NULL), dir);
    if (want_tail) {
        snprintf(want, sizeof want, "state directory %s: %s", dir, want_tail);
        CHECK_STR(why, want);
    }
}

/* The test's own tree: BASE (mkdtemp, 0700) under /tmp (root's, sticky 1777). */
static void test_walk(void)
{
    snprintf(base, sizeof base, "/tmp/rd-fsperm.XXXXXX");
    CHECK(mkdtemp(base) != NULL);
    char want[512];
    /* under /tmp (sticky, root's) and our own 0700 directory: made, accepted */
    expect(at("ok/state/redrive"), NULL);
    struct stat st;
    CHECK(lstat(at("ok/state/redrive"), &st) == 0 && S_ISDIR(st.st_mode) &&
          (st.st_mode & 0777) == 0700);
    /* a group-writable parent: refused, nothing made below it */
    CHECK(mkdir(at("gw"), 0700) == 0 && chmod(at("gw"), 0775) == 0);
    snprintf(want, sizeof want, "the directory %s is group/world writable (mode 0775): "
             "chmod go-w it", at("gw"));
    expect(at("gw/state/redrive"), want);
    CHECK(lstat(at("gw/state"), &st) != 0);
    /* a world-writable sticky parent that is not root's: refused too */
    CHECK(mkdir(at("sticky"), 0700) == 0 && chmod(at("sticky"), 01777) == 0);
    snprintf(want, sizeof want, "the directory %s is group/world writable (mode 1777): "
             "chmod go-w it", at("sticky"));
    if (geteuid() != 0)   /* root's sticky dir is the one exception: as root, it is ours */
        expect(at("sticky/redrive"), want);
    /* a parent owned by another user (nobody): refused, a grandparent too */
    CHECK(mkdir(at("theirs"), 0755) == 0 && mkdir(at("theirs/home"), 0700) == 0);
    CHECK(chown(at("theirs"), 65534, 65534) == 0);
    snprintf(want, sizeof want, "the directory %s is owned by uid 65534, not by you (uid %u) "
             "or root", at("theirs"), (unsigned)geteuid());
    expect(at("theirs/home/.local/state/redrive"), want);
    expect(at("theirs/redrive"), want);
    /* a symlinked component is checked where it leads */
    CHECK(symlink(at("theirs/home"), at("link")) == 0);
    expect(at("link/redrive"), want);
    CHECK(lstat(at("theirs/home/redrive"), &st) != 0);
    CHECK(symlink(at("ok/state"), at("goodlink")) == 0);
    expect(at("goodlink/redrive"), NULL);       /* leads to our own: fine */
    CHECK(symlink(at("gw"), at("gwlink")) == 0);
    snprintf(want, sizeof want, "the directory %s is group/world writable (mode 0775): "
             "chmod go-w it", at("gw"));
    expect(at("gwlink/x/redrive"), want);
    /* the directory itself: a symlink is never it, a group-writable one is refused */
    char why[512];
    CHECK(!fsperm_dir_ready(at("goodlink"), "state directory", why, sizeof why));
    snprintf(want, sizeof want, "state directory %s is not a directory (a symbolic link)",
             at("goodlink"));
    CHECK_STR(why, want);
    /* a parent that is a file */
    FILE *f = fopen(at("file"), "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(want, sizeof want, "%s is not a directory (a regular file)", at("file"));
    CHECK(!fsperm_parents_ok(at("file/x"), "cache directory", why, sizeof why));
    char full[600];
    snprintf(full, sizeof full, "cache directory %s: %s", at("file/x"), want);
    CHECK_STR(why, full);
    /* read, not made: a missing directory passes when its parents do */
    CHECK(fsperm_dir_trusted(at("ok/none"), "batches directory", why, sizeof why));
    CHECK(!fsperm_dir_trusted(at("theirs/home/none"), "batches directory", why, sizeof why));
    CHECK(!fsperm_dir_trusted(at("gw"), "batches directory", why, sizeof why));
    /* relative paths are walked from the current directory */
    char *cwd = getcwd(NULL, 0);
    CHECK(chdir(at("theirs/home")) == 0);
    CHECK(!fsperm_parents_ok("x/y", "state directory", why, sizeof why));
    CHECK(chdir(at("ok")) == 0);
    CHECK(fsperm_parents_ok("state/redrive/x", "state directory", why, sizeof why));
    CHECK(cwd && chdir(cwd) == 0);
    free(cwd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
}

/* journal_syslog's socket: ours (any mode), or a symlink to one (/dev/log's way); a
 * missing one says ENOENT; a file is not a socket; another user's is refused. */
static void test_socket(void)
{
    snprintf(base, sizeof base, "/tmp/rd-fssock.XXXXXX");
    CHECK(mkdtemp(base) != NULL);
    char why[512], want[512];
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at("log"));
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(chmod(at("log"), 0666) == 0);          /* anyone may send: fine */
    CHECK(fsperm_socket_ok(at("log"), why, sizeof why));
    CHECK(symlink(at("log"), at("devlog")) == 0);
    CHECK(fsperm_socket_ok(at("devlog"), why, sizeof why));
    errno = 0;
    CHECK(!fsperm_socket_ok(at("none"), why, sizeof why) && errno == ENOENT);
    CHECK(!fsperm_socket_ok(at("none/log"), why, sizeof why) && errno == ENOENT);
    FILE *f = fopen(at("file"), "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    CHECK(!fsperm_socket_ok(at("file"), why, sizeof why) && errno == EPERM);
    snprintf(want, sizeof want, "syslog socket %s is not a socket (a regular file)", at("file"));
    CHECK_STR(why, want);
    CHECK(chown(at("log"), 65534, 65534) == 0);
    CHECK(!fsperm_socket_ok(at("devlog"), why, sizeof why));
    snprintf(want, sizeof want, "syslog socket %s is owned by uid 65534, not by you (uid %u)%s",
             at("devlog"), (unsigned)geteuid(), geteuid() ? " or root" : "");
    CHECK_STR(why, want);
    if (fd >= 0)
        close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    test_rules();
    test_owners();
    test_walk();
    test_socket();
    return check_done("fsperm");
}
