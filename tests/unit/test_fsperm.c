/* The one owner/mode rule (core/fsperm.h): one row per boundary. The stat is made up, so
 * every owner and type is tried whoever runs the test. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

int main(void)
{
    test_rules();
    test_owners();
    return check_done("fsperm");
}
