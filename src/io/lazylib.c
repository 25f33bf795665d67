/*
 * libpq and libcurl, loaded on first use instead of at exec (issue 12).
 *
 * Linked normally, the two pull in ~30 more shared libraries (Kerberos, LDAP, GnuTLS,
 * nettle, gmp, libssh2, librtmp, nghttp2, ...): their loading and relocation was most of
 * the time from exec to the first paint and several MiB of resident pages in every
 * console, also one that never talks HTTP or PostgreSQL (a Redis store, read-only).
 * The binary links neither; each function the code calls is defined here with the
 * header's own prototype (the compiler checks them) and forwards to the real one, found
 * with dlopen/dlsym the first time it is called. The console calls none before its first
 * paint. A library that cannot be loaded is fatal, as a missing one was at exec.
 *
 * The handles and function pointers are process-wide, like the libraries' own global
 * state; they are filled on the loop's thread (nothing else calls these libraries).
 */
#define CURL_DISABLE_TYPECHECK   /* the variadic wrappers below are plain functions */
#include <curl/curl.h>
#include <dlfcn.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct lazy_lib {
    const char *soname;
    void *handle;
} lazy_lib;

static lazy_lib lib_pq = {"libpq.so.5", NULL};
static lazy_lib lib_curl = {"libcurl.so.4", NULL};

static void *lazy_sym(lazy_lib *l, const char *name)
{
    if (!l->handle) {
        l->handle = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
        if (!l->handle) {
            const char *e = dlerror();
            fprintf(stderr, "redrive: cannot load %s: %s\n", l->soname, e ? e : "?");
            abort();
        }
    }
    void *p = dlsym(l->handle, name);
    if (!p) {
        fprintf(stderr, "redrive: %s has no %s\n", l->soname, name);
        abort();
    }
    return p;
}

/* ret name(params) { return real(args); }, the real one looked up once */
#define LAZY(lib, ret, name, params, args)                   \
    ret name params                                          \
    {                                                        \
        static ret(*fn) params;                              \
        if (!fn)                                             \
            *(void **)&fn = lazy_sym(&lib, #name);           \
        return fn args;                                      \
    }
#define LAZY_VOID(lib, name, params, args)                   \
    void name params                                         \
    {                                                        \
        static void(*fn) params;                             \
        if (!fn)                                             \
            *(void **)&fn = lazy_sym(&lib, #name);           \
        fn args;                                             \
    }

/* ---- libpq ---- */
LAZY_VOID(lib_pq, PQclear, (PGresult *res), (res))
LAZY(lib_pq, PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn))
LAZY(lib_pq, PGconn *, PQconnectStartParams,
     (const char *const *keywords, const char *const *values, int expand_dbname),
     (keywords, values, expand_dbname))
LAZY(lib_pq, PQconninfoOption *, PQconninfo, (PGconn *conn), (conn))
LAZY_VOID(lib_pq, PQconninfoFree, (PQconninfoOption *connOptions), (connOptions))
LAZY(lib_pq, PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg))
LAZY(lib_pq, int, PQconsumeInput, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQenterPipelineMode, (PGconn *conn), (conn))
LAZY(lib_pq, char *, PQerrorMessage, (const PGconn *conn), (conn))
LAZY_VOID(lib_pq, PQfinish, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQflush, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQfnumber, (const PGresult *res, const char *field_name), (res, field_name))
LAZY_VOID(lib_pq, PQfreemem, (void *ptr), (ptr))
LAZY(lib_pq, PGresult *, PQgetResult, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQgetisnull, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
LAZY(lib_pq, char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num), (res, tup_num, field_num))
LAZY(lib_pq, int, PQisBusy, (PGconn *conn), (conn))
LAZY(lib_pq, PGresult *, PQmakeEmptyPGresult, (PGconn *conn, ExecStatusType status), (conn, status))
LAZY(lib_pq, int, PQnfields, (const PGresult *res), (res))
LAZY(lib_pq, PGnotify *, PQnotifies, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQntuples, (const PGresult *res), (res))
LAZY(lib_pq, const char *, PQparameterStatus, (const PGconn *conn, const char *paramName), (conn, paramName))
LAZY(lib_pq, int, PQpipelineSync, (PGconn *conn), (conn))
LAZY(lib_pq, char *, PQresStatus, (ExecStatusType status), (status))
LAZY(lib_pq, char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode))
LAZY(lib_pq, char *, PQresultErrorMessage, (const PGresult *res), (res))
LAZY(lib_pq, ExecStatusType, PQresultStatus, (const PGresult *res), (res))
LAZY(lib_pq, int, PQsendPrepare,
     (PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes),
     (conn, stmtName, query, nParams, paramTypes))
LAZY(lib_pq, int, PQsendQueryPrepared,
     (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
      const int *paramLengths, const int *paramFormats, int resultFormat),
     (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat))
LAZY(lib_pq, int, PQsendQueryParams,
     (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
      const int *paramLengths, const int *paramFormats, int resultFormat),
     (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat))
LAZY(lib_pq, int, PQserverVersion, (const PGconn *conn), (conn))
LAZY(lib_pq, PQnoticeReceiver, PQsetNoticeReceiver, (PGconn *conn, PQnoticeReceiver proc, void *arg),
     (conn, proc, arg))
LAZY(lib_pq, int, PQsetResultAttrs, (PGresult *res, int numAttributes, PGresAttDesc *attDescs),
     (res, numAttributes, attDescs))
LAZY(lib_pq, int, PQsetvalue, (PGresult *res, int tup_num, int field_num, char *value, int len),
     (res, tup_num, field_num, value, len))
LAZY(lib_pq, int, PQsetnonblocking, (PGconn *conn, int arg), (conn, arg))
LAZY(lib_pq, int, PQsocket, (const PGconn *conn), (conn))
LAZY(lib_pq, int, PQsslInUse, (PGconn *conn), (conn))
LAZY(lib_pq, ConnStatusType, PQstatus, (const PGconn *conn), (conn))
LAZY(lib_pq, char *, PQuser, (const PGconn *conn), (conn))
LAZY(lib_pq, char *, PQhost, (const PGconn *conn), (conn))
LAZY(lib_pq, char *, PQport, (const PGconn *conn), (conn))

/* ---- libcurl ---- */
LAZY_VOID(lib_curl, curl_easy_cleanup, (CURL *curl), (curl))
LAZY(lib_curl, char *, curl_easy_escape, (CURL *handle, const char *string, int length), (handle, string, length))
LAZY(lib_curl, CURL *, curl_easy_init, (void), ())
LAZY(lib_curl, const char *, curl_easy_strerror, (CURLcode code), (code))
LAZY_VOID(lib_curl, curl_free, (void *p), (p))
LAZY(lib_curl, CURLcode, curl_global_init, (long flags), (flags))
LAZY(lib_curl, CURLMcode, curl_multi_add_handle, (CURLM *multi_handle, CURL *curl_handle), (multi_handle, curl_handle))
LAZY(lib_curl, CURLMcode, curl_multi_assign, (CURLM *multi_handle, curl_socket_t sockfd, void *sockp),
     (multi_handle, sockfd, sockp))
LAZY(lib_curl, CURLMcode, curl_multi_cleanup, (CURLM *multi_handle), (multi_handle))
LAZY(lib_curl, CURLMsg *, curl_multi_info_read, (CURLM *multi_handle, int *msgs_in_queue), (multi_handle, msgs_in_queue))
LAZY(lib_curl, CURLM *, curl_multi_init, (void), ())
LAZY(lib_curl, CURLMcode, curl_multi_remove_handle, (CURLM *multi_handle, CURL *curl_handle),
     (multi_handle, curl_handle))
LAZY(lib_curl, CURLMcode, curl_multi_socket_action,
     (CURLM *multi_handle, curl_socket_t s, int ev_bitmask, int *running_handles),
     (multi_handle, s, ev_bitmask, running_handles))
LAZY(lib_curl, struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data), (list, data))
LAZY_VOID(lib_curl, curl_slist_free_all, (struct curl_slist *list), (list))
LAZY(lib_curl, CURLU *, curl_url, (void), ())
LAZY_VOID(lib_curl, curl_url_cleanup, (CURLU *handle), (handle))
LAZY(lib_curl, CURLUcode, curl_url_get, (CURLU *handle, CURLUPart what, char **part, unsigned int flags),
     (handle, what, part, flags))
LAZY(lib_curl, CURLUcode, curl_url_set, (CURLU *handle, CURLUPart what, const char *part, unsigned int flags),
     (handle, what, part, flags))
LAZY(lib_curl, curl_version_info_data *, curl_version_info, (CURLversion v), (v))

/* The variadic three take one argument whose type the option's number range tells
 * (curl's own setopt reads it the same way). */
static CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
static CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
static CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
    if (!easy_setopt)
        *(void **)&easy_setopt = lazy_sym(&lib_curl, "curl_easy_setopt");
    va_list ap;
    va_start(ap, option);
    CURLcode rc;
    if (option < CURLOPTTYPE_OBJECTPOINT)
        rc = easy_setopt(curl, option, va_arg(ap, long));
    else if (option < CURLOPTTYPE_FUNCTIONPOINT)
        rc = easy_setopt(curl, option, va_arg(ap, void *));
    else if (option < CURLOPTTYPE_OFF_T)
        rc = easy_setopt(curl, option, va_arg(ap, void (*)(void)));
    else if (option < CURLOPTTYPE_BLOB)
        rc = easy_setopt(curl, option, va_arg(ap, curl_off_t));
    else
        rc = easy_setopt(curl, option, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

CURLMcode curl_multi_setopt(CURLM *multi_handle, CURLMoption option, ...)
{
    if (!multi_setopt)
        *(void **)&multi_setopt = lazy_sym(&lib_curl, "curl_multi_setopt");
    va_list ap;
    va_start(ap, option);
    CURLMcode rc;
    if ((int)option < CURLOPTTYPE_OBJECTPOINT)
        rc = multi_setopt(multi_handle, option, va_arg(ap, long));
    else if ((int)option < CURLOPTTYPE_FUNCTIONPOINT)
        rc = multi_setopt(multi_handle, option, va_arg(ap, void *));
    else if ((int)option < CURLOPTTYPE_OFF_T)
        rc = multi_setopt(multi_handle, option, va_arg(ap, void (*)(void)));
    else
        rc = multi_setopt(multi_handle, option, va_arg(ap, curl_off_t));
    va_end(ap);
    return rc;
}

CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
    if (!easy_getinfo)
        *(void **)&easy_getinfo = lazy_sym(&lib_curl, "curl_easy_getinfo");
    va_list ap;
    va_start(ap, info);
    CURLcode rc = easy_getinfo(curl, info, va_arg(ap, void *));   /* always a pointer */
    va_end(ap);
    return rc;
}
