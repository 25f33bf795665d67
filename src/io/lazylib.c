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
 * libssl, libcrypto and libevent_openssl the same way: only a TLS store (the Redis TLS
 * bridge, src/io/tlsbridge.c) and SigV4 signing (SQS) use them directly — libpq and
 * libcurl load their own copies when they connect. Linked, they were most of what was
 * left of the dynamic loader's work before the first paint.
 *
 * The handles and function pointers are process-wide, like the libraries' own global
 * state. They are filled on the loop's thread, and on the console's job thread (ui/bgjob.c:
 * a batch's resume asks the store its identity, session_bound.c): a library is opened
 * under a lock, and each pointer is read and set atomically.
 */
#define CURL_DISABLE_TYPECHECK   /* the variadic wrappers below are plain functions */
#include <curl/curl.h>
#include <dlfcn.h>
#include <event2/bufferevent_ssl.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct lazy_lib {
    const char *soname;
    void *handle;
} lazy_lib;

static lazy_lib lib_pq = {"libpq.so.5", NULL};
static lazy_lib lib_curl = {"libcurl.so.4", NULL};
static lazy_lib lib_crypto = {"libcrypto.so.3", NULL};
static lazy_lib lib_ssl = {"libssl.so.3", NULL};
static lazy_lib lib_event_ssl = {"libevent_openssl-2.1.so.7", NULL};

static pthread_mutex_t lazy_lock = PTHREAD_MUTEX_INITIALIZER;

static void *lazy_sym(lazy_lib *l, const char *name)
{
    pthread_mutex_lock(&lazy_lock);
    if (!l->handle) {
        l->handle = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
        if (!l->handle) {
            const char *e = dlerror();
            fprintf(stderr, "redrive: cannot load %s: %s\n", l->soname, e ? e : "?");
            abort();
        }
    }
    void *p = dlsym(l->handle, name);
    pthread_mutex_unlock(&lazy_lock);
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
        static void *fp;                                     \
        void *f = __atomic_load_n(&fp, __ATOMIC_ACQUIRE);    \
        if (!f) {                                            \
            f = lazy_sym(&lib, #name);                       \
            __atomic_store_n(&fp, f, __ATOMIC_RELEASE);      \
        }                                                    \
        ret(*fn) params;                                     \
        *(void **)&fn = f;                                   \
        return fn args;                                      \
    }
#define LAZY_VOID(lib, name, params, args)                   \
    void name params                                         \
    {                                                        \
        static void *fp;                                     \
        void *f = __atomic_load_n(&fp, __ATOMIC_ACQUIRE);    \
        if (!f) {                                            \
            f = lazy_sym(&lib, #name);                       \
            __atomic_store_n(&fp, f, __ATOMIC_RELEASE);      \
        }                                                    \
        void (*fn) params;                                   \
        *(void **)&fn = f;                                   \
        fn args;                                             \
    }

/* ---- libpq ---- */
LAZY_VOID(lib_pq, PQclear, (PGresult *res), (res))
LAZY(lib_pq, PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn))
LAZY(lib_pq, PGconn *, PQconnectStartParams,
     (const char *const *keywords, const char *const *values, int expand_dbname),
     (keywords, values, expand_dbname))
LAZY(lib_pq, PQconninfoOption *, PQconninfo, (PGconn *conn), (conn))
LAZY(lib_pq, PGconn *, PQconnectdbParams,
     (const char *const *keywords, const char *const *values, int expand_dbname),
     (keywords, values, expand_dbname))
LAZY(lib_pq, PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query))
LAZY(lib_pq, PGresult *, PQexecParams,
     (PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
      const int *paramLengths, const int *paramFormats, int resultFormat),
     (conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat))
LAZY_VOID(lib_pq, PQconninfoFree, (PQconninfoOption *connOptions), (connOptions))
LAZY(lib_pq, PQconninfoOption *, PQconninfoParse, (const char *conninfo, char **errmsg), (conninfo, errmsg))
LAZY(lib_pq, int, PQconsumeInput, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQenterPipelineMode, (PGconn *conn), (conn))
LAZY(lib_pq, char *, PQerrorMessage, (const PGconn *conn), (conn))
LAZY_VOID(lib_pq, PQfinish, (PGconn *conn), (conn))
LAZY(lib_pq, int, PQflush, (PGconn *conn), (conn))
LAZY(lib_pq, char *, PQfname, (const PGresult *res, int field_num), (res, field_num))
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

/* ---- libcrypto ---- */
LAZY_VOID(lib_crypto, ERR_clear_error, (void), ())
LAZY(lib_crypto, unsigned long, ERR_peek_last_error, (void), ())
LAZY(lib_crypto, const char *, ERR_reason_error_string, (unsigned long e), (e))
LAZY(lib_crypto, const EVP_MD *, EVP_sha256, (void), ())
LAZY(lib_crypto, unsigned char *, HMAC,
     (const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data, size_t data_len,
      unsigned char *md, unsigned int *md_len),
     (evp_md, key, key_len, data, data_len, md, md_len))
LAZY_VOID(lib_crypto, OPENSSL_cleanse, (void *ptr, size_t len), (ptr, len))
LAZY(lib_crypto, unsigned char *, SHA256, (const unsigned char *d, size_t n, unsigned char *md), (d, n, md))
LAZY(lib_crypto, int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *param, const char *ipasc),
     (param, ipasc))
LAZY_VOID(lib_crypto, X509_VERIFY_PARAM_set_hostflags, (X509_VERIFY_PARAM *param, unsigned int flags),
          (param, flags))
LAZY(lib_crypto, const char *, X509_verify_cert_error_string, (long n), (n))

/* ---- libssl ---- */
LAZY(lib_ssl, const char *, SSL_CIPHER_get_name, (const SSL_CIPHER *c), (c))
LAZY(lib_ssl, int, SSL_CTX_check_private_key, (const SSL_CTX *ctx), (ctx))
LAZY(lib_ssl, long, SSL_CTX_ctrl, (SSL_CTX *ctx, int cmd, long larg, void *parg), (ctx, cmd, larg, parg))
LAZY_VOID(lib_ssl, SSL_CTX_free, (SSL_CTX *ctx), (ctx))
LAZY(lib_ssl, int, SSL_CTX_load_verify_locations, (SSL_CTX *ctx, const char *CAfile, const char *CApath),
     (ctx, CAfile, CApath))
LAZY(lib_ssl, SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *meth), (meth))
LAZY_VOID(lib_ssl, SSL_CTX_set_default_passwd_cb, (SSL_CTX *ctx, pem_password_cb *cb), (ctx, cb))
LAZY(lib_ssl, int, SSL_CTX_set_default_verify_paths, (SSL_CTX *ctx), (ctx))
LAZY_VOID(lib_ssl, SSL_CTX_set_verify, (SSL_CTX *ctx, int mode, SSL_verify_cb callback), (ctx, mode, callback))
LAZY(lib_ssl, int, SSL_CTX_use_PrivateKey_file, (SSL_CTX *ctx, const char *file, int type), (ctx, file, type))
LAZY(lib_ssl, int, SSL_CTX_use_certificate_chain_file, (SSL_CTX *ctx, const char *file), (ctx, file))
LAZY(lib_ssl, long, SSL_ctrl, (SSL *ssl, int cmd, long larg, void *parg), (ssl, cmd, larg, parg))
LAZY_VOID(lib_ssl, SSL_free, (SSL *ssl), (ssl))
LAZY(lib_ssl, X509_VERIFY_PARAM *, SSL_get0_param, (SSL *ssl), (ssl))
LAZY(lib_ssl, const SSL_CIPHER *, SSL_get_current_cipher, (const SSL *s), (s))
LAZY(lib_ssl, long, SSL_get_verify_result, (const SSL *ssl), (ssl))
LAZY(lib_ssl, const char *, SSL_get_version, (const SSL *s), (s))
LAZY(lib_ssl, SSL *, SSL_new, (SSL_CTX *ctx), (ctx))
LAZY(lib_ssl, int, SSL_set1_host, (SSL *s, const char *hostname), (s, hostname))
LAZY(lib_ssl, const SSL_METHOD *, TLS_client_method, (void), ())

/* ---- libevent_openssl ---- */
LAZY(lib_event_ssl, struct bufferevent *, bufferevent_openssl_filter_new,
     (struct event_base *base, struct bufferevent *underlying, struct ssl_st *ssl,
      enum bufferevent_ssl_state state, int options),
     (base, underlying, ssl, state, options))
LAZY(lib_event_ssl, unsigned long, bufferevent_get_openssl_error, (struct bufferevent *bev), (bev))
LAZY(lib_event_ssl, struct ssl_st *, bufferevent_openssl_get_ssl, (struct bufferevent *bufev), (bufev))
LAZY_VOID(lib_event_ssl, bufferevent_openssl_set_allow_dirty_shutdown,
          (struct bufferevent *bev, int allow_dirty_shutdown), (bev, allow_dirty_shutdown))

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
