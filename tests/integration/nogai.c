/* LD_PRELOAD shim for test_snapshot_failures.py: getaddrinfo of the host name RD_NOGAI (the
 * C library's blocking lookup, which libpq would run on the loop for a name it is given)
 * fails, and each such call is logged to RD_NOGAI_LOG. The sources look names up with evdns
 * (io/resolve.h) and hand libpq the address: the log stays empty. */
#include <dlfcn.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    const char *name = getenv("RD_NOGAI");
    if (node && name && strcmp(node, name) == 0) {
        const char *log = getenv("RD_NOGAI_LOG");
        FILE *f = log ? fopen(log, "a") : NULL;
        if (f) {
            fprintf(f, "getaddrinfo %s\n", node);
            fclose(f);
        }
        return EAI_FAIL;
    }
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **) = NULL;
    void *sym = dlsym(RTLD_NEXT, "getaddrinfo");
    memcpy(&real, &sym, sizeof real);   /* POSIX: a function's address through void * */
    return real ? real(node, service, hints, res) : EAI_FAIL;
}
