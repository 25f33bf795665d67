#pragma once
/*
 * TLS bridge for hiredis 0.14, which has no TLS: hiredis connects to a private unix
 * socket (redisAsyncConnectUnix(tlsb_path(b))); for each connection accepted there the
 * bridge opens a TLS connection to the real server with libevent's OpenSSL support and
 * carries the bytes both ways, on the caller's event_base, without ever blocking it.
 * Only this process may use it: the socket's directory is 0700, and a connection from
 * any other process (SO_PEERCRED: another pid, even of the same user) is closed unread.
 *
 * - The server address is resolved by the caller (evdns); the bridge never looks names
 *   up. opts.host is the name the certificate must match (SNI too when it is a name; an
 *   IP literal is matched against the certificate's IP addresses).
 * - Verification is always on (system trust store, or opts.cacert), TLS 1.2 minimum,
 *   unless opts.insecure: then nothing is verified and the caller must say so visibly
 *   (tlsb_insecure()).
 * - Each accepted connection starts its TCP connect + handshake at once, with its own
 *   deadline (opts.timeout_s). Bytes hiredis sends meanwhile wait in the bridge.
 * - Flow control: neither direction buffers more than opts.max_buffer; a full side stops
 *   reading the other until it drains.
 * - When the server ends, what it sent still reaches hiredis (within the same deadline),
 *   then hiredis's side is closed; when hiredis ends, the TLS connection is closed at once.
 *
 * Errors: hiredis only sees its unix connection close ("Server closed the connection"),
 * so the bridge reports the real reason through the callback as it happens, and keeps it
 * for tlsb_error(): e.g. "TLS: certificate verify failed: certificate has expired
 * (redis.example:6380)", "connect: connection refused (10.0.0.5:6380)", "TLS handshake did
 * not finish within 3 s (redis.example:6380)". Messages are raw (they contain the
 * configured host name): sanitize before display. Nothing is printed, ever.
 *
 * The process must ignore SIGPIPE (as it must for hiredis): writes to a closed socket
 * would otherwise kill it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct event_base;
typedef struct tlsb tlsb;

typedef struct tlsb_opts {
    const char *host;        /* required: the server's name or IP literal (no brackets) */
    const char *cacert;      /* PEM CA bundle (store_cacert); NULL or "" = system store */
    const char *cert;        /* client certificate chain (PEM), NULL = none */
    const char *key;         /* its unencrypted private key (PEM); NULL = inside cert */
    bool insecure;           /* no verification at all (show a banner) */
    double timeout_s;        /* TCP connect + handshake, per connection; <= 0 → 3 s */
    size_t max_buffer;       /* per direction; 0 → 1 MiB */
} tlsb_opts;

typedef enum tlsb_event {
    TLSB_UP,                 /* a handshake finished; msg: "TLSv1.3 …, certificate verified …" */
    TLSB_ERROR,              /* a connection failed; msg: the reason (also tlsb_error()) */
} tlsb_event;

/* Runs from the loop, never from inside a tlsb_* call. tlsb_free() is allowed here. */
typedef void (*tlsb_cb)(tlsb_event ev, const char *msg, void *ud);

/* Loads the CA/client certificate, creates the private directory (mkdtemp, 0700) and
 * listens there. Returns NULL with err (e.g. "cannot read CA file ca.pem: No such file or
 * directory") when the settings cannot work; nothing is connected yet. sa is copied. */
tlsb *tlsb_new(struct event_base *base, const tlsb_opts *opts, const struct sockaddr *sa,
               socklen_t salen, tlsb_cb cb, void *ud, char *err, size_t errcap);
/* Closes every bridged connection (no callback), the listener, removes the socket and
 * its directory. NULL ok. Safe inside the callback. */
void tlsb_free(tlsb *b);

const char *tlsb_path(const tlsb *b);     /* the unix socket for hiredis */
/* The last connection error, "" when none since the last tlsb_clear_error() or the last
 * successful handshake. Use it in place of hiredis's EOF message. */
const char *tlsb_error(const tlsb *b);
void tlsb_clear_error(tlsb *b);
/* Protocol, cipher and verification state of the last handshake, "" before one. */
const char *tlsb_info(const tlsb *b);
bool tlsb_insecure(const tlsb *b);
size_t tlsb_connections(const tlsb *b);   /* bridged connections open now */
/* The most bytes one side ever held waiting to be written (flow control's bound). */
size_t tlsb_peak_buffered(const tlsb *b);
