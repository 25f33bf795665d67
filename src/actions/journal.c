/* The audit journal: JSON lines, mode 0600, never a token (see journal.h). */
#include "journal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/jsonget.h"
#include "../core/sanitize.h"
#include "../core/fsperm.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "jsyslog.h"
#include "lineappend.h"

#define JOURNAL_TAIL_BYTES ((off_t)4 << 20)   /* read at most the last 4 MiB */
#define JOURNAL_RAW_CAP 4096                  /* raw text kept per entry */

char *journal_default_path(void)
{
    const char *state = getenv("XDG_STATE_HOME");
    if (state && state[0] == '/')
        return xasprintf("%s/redrive/journal.jsonl", state);
    const char *home = getenv("HOME");
    if (home && home[0])
        return xasprintf("%s/.local/state/redrive/journal.jsonl", home);
    return NULL;
}

void journal_time_now(char *buf, size_t cap)
{
    double now = clock_wall();
    time_t secs = (time_t)now;
    long ms = (long)((now - (double)secs) * 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03ldZ", base, ms > 999 ? 999 : ms);
}

/* The state directory (the journal's): every directory above it checked, created 0700
 * when missing, then it must be a real directory (not a symlink) of ours that nobody else
 * can write (fsperm_dir_ready, core/fsperm.h). The directory, or NULL with why. */
static char *state_dir(const char *path, char *why, size_t whycap)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        free(dir);
        return xstrdup(".");
    }
    slash[slash == dir] = '\0';     /* "/journal.jsonl" lives in "/" */
    if (!fsperm_dir_ready(dir, "state directory", why, whycap)) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* A journal line is JSON that any reader takes (jq, Python): every string valid UTF-8,
 * an invalid byte (a hostile task's fingerprint, an id) written as U+FFFD. */
static cJSON *utf8_string(const char *s)
{
    char *v = sanitize_utf8(s, strlen(s));
    cJSON *x = cJSON_CreateString(v);
    free(v);
    return x;
}

static void add_text(cJSON *o, const char *key, const char *s)
{
    cJSON_AddItemToObject(o, key, utf8_string(s));
}

static char *record_json(const rd_journal_rec *rec)
{
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *o = cJSON_CreateObject();
    add_text(o, "time", now);
    add_text(o, "operator", rec->operator_ ? rec->operator_ : "unknown");
    add_text(o, "system", rec->system ? rec->system : "");
    add_text(o, "action", rec->action ? rec->action : "");
    cJSON *t = cJSON_AddArrayToObject(o, "targets");
    for (size_t i = 0; i < rec->n_targets; i++)
        cJSON_AddItemToArray(t, utf8_string(rec->targets[i] ? rec->targets[i] : ""));
    if (rec->idempotency_key)
        add_text(o, "idempotency_key", rec->idempotency_key);
    else
        cJSON_AddNullToObject(o, "idempotency_key");
    cJSON_AddNumberToObject(o, "http_status", (double)rec->http_status);
    add_text(o, "result", rec->result ? rec->result : "");
    add_text(o, "code", rec->code ? rec->code : "");
    if (rec->batch)
        add_text(o, "batch", rec->batch);
    if (rec->fp)
        add_text(o, "fp", rec->fp);
    if (rec->attempt > 0)
        cJSON_AddNumberToObject(o, "attempt", rec->attempt);
    if (rec->override_)
        add_text(o, "override", rec->override_);
    if (rec->batch && rec->has_item)
        cJSON_AddNumberToObject(o, "item", (double)rec->item);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* What is at path when opening it for writing failed with ENXIO (a FIFO without a
 * reader, a socket): the refusal names it instead of "no such device". */
static void name_the_thing(const char *path, char *why, size_t whycap)
{
    struct stat st;
    if (lstat(path, &st) == 0)
        fsperm_refused(&st, "journal", path, FSP_REGULAR, why, whycap);
}

/* A crash after the file's creation must not lose its directory entry. */
static bool sync_dir(const char *dir, char *why, size_t whycap)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool ok = dfd >= 0 && fsync(dfd) == 0;
    if (!ok)
        snprintf(why, whycap, "cannot sync the state directory %s: %s", dir, strerror(errno));
    if (dfd >= 0)
        close(dfd);
    return ok;
}

/* The journal opened for appending: a regular file of ours that nobody else can write
 * (one others can read is made 0600), never a FIFO or a device, never blocking. Read and
 * write: the appender reads its last byte back (lineappend.h). */
static int journal_open(const char *path, char *why, size_t whycap)
{
    char *dir = state_dir(path, why, whycap);
    if (!dir)
        return -1;
    const int flags = O_RDWR | O_APPEND | O_NOFOLLOW;
    const unsigned rules = FSP_REGULAR;
    bool created = true;
    int fd = fsperm_open(path, flags | O_CREAT | O_EXCL, 0600, "journal", rules, NULL, why,
                         whycap);
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = fsperm_open(path, flags, 0, "journal", rules, NULL, why, whycap);
        if (fd < 0 && errno == ENXIO)
            name_the_thing(path, why, whycap);
    }
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 077) && fchmod(fd, 0600) != 0) {
        snprintf(why, whycap, "journal %s is group/world readable and cannot be made 0600: %s",
                 path, strerror(errno));
        close(fd);
        fd = -1;
    }
    if (fd >= 0 && created && !sync_dir(dir, why, whycap)) {
        close(fd);
        fd = -1;
    }
    free(dir);
    return fd;
}

bool journal_check(const char *path, char *why, size_t whycap)
{
    char *def = NULL;
    if (!path && !(path = def = journal_default_path())) {
        snprintf(why, whycap, "no journal path (set XDG_STATE_HOME or HOME)");
        return false;
    }
    int fd = journal_open(path, why, whycap);
    free(def);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* journal_syslog: the same line (without its newline) to syslog, best effort (jsyslog.h). */
static void journal_copy_to_syslog(const char *syslog, const char *line)
{
    char ignored[128];
    if (!syslog)
        return;
    size_t len = strlen(line);
    char *copy = xstrndup(line, len && line[len - 1] == '\n' ? len - 1 : len);
    jsyslog_send(syslog, copy, ignored, sizeof ignored);
    free(copy);
}

/* The one write path: the line, on disk (fdatasync) before this returns true; a write
 * that fails leaves nothing of it (lineappend.h). */
static bool journal_write(const char *path, const char *line, char *why, size_t whycap)
{
    int fd = journal_open(path, why, whycap);
    if (fd < 0)
        return false;
    char err[160];
    bool ok = lineappend_write(fd, line, strlen(line), err, sizeof err);
    if (!ok)
        snprintf(why, whycap, "cannot write journal %s: %s", path, err);
    else if (!(ok = fdatasync(fd) == 0))
        snprintf(why, whycap, "cannot sync journal %s to disk: %s", path, strerror(errno));
    if (close(fd) != 0 && ok) {
        snprintf(why, whycap, "cannot write journal %s: %s", path, strerror(errno));
        ok = false;
    }
    return ok;
}

int journal_write_lines(const char *path, const char *const *lines, const char *const *syslog,
                        size_t n, bool *ok, char (*why)[256])
{
    char *def = NULL;
    size_t wc = sizeof why[0];
    for (size_t i = 0; i < n; i++)
        ok[i] = false;
    if (!path && !(path = def = journal_default_path())) {
        for (size_t i = 0; i < n; i++)
            snprintf(why[i], wc, "no journal path (set XDG_STATE_HOME or HOME)");
        return 0;
    }
    char openwhy[256];
    int fd = journal_open(path, openwhy, sizeof openwhy), syncs = 0;
    if (fd < 0) {
        for (size_t i = 0; i < n; i++)
            snprintf(why[i], wc, "%s", openwhy);
        free(def);
        return 0;
    }
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {   /* each line whole or nothing of it (lineappend.h) */
        char err[160];
        ok[i] = lineappend_write(fd, lines[i], strlen(lines[i]), err, sizeof err);
        if (!ok[i])
            snprintf(why[i], wc, "cannot write journal %s: %s", path, err);
        written += ok[i];
    }
    /* one sync covers every line written: none of them counts before it */
    bool sync_failed = false, close_failed = false;
    int err = 0;
    if (written) {
        syncs = 1;
        if (fdatasync(fd) != 0) {
            sync_failed = true;
            err = errno;
        }
    }
    if (close(fd) != 0 && !sync_failed && written) {
        close_failed = true;
        err = errno;
    }
    for (size_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        if (sync_failed || close_failed) {
            ok[i] = false;
            if (sync_failed)
                snprintf(why[i], wc, "cannot sync journal %s to disk: %s", path, strerror(err));
            else
                snprintf(why[i], wc, "cannot write journal %s: %s", path, strerror(err));
        } else {
            journal_copy_to_syslog(syslog ? syslog[i] : NULL, lines[i]);
        }
    }
    free(def);
    return syncs;
}

char *journal_line(const rd_journal_rec *rec)
{
    char *json = record_json(rec);
    char *line = xasprintf("%s\n", json);
    free(json);
    return line;
}

bool journal_write_line(const char *path, const char *line, const char *syslog, char *why,
                        size_t whycap)
{
    char *def = NULL;
    if (!path && !(path = def = journal_default_path())) {
        snprintf(why, whycap, "no journal path (set XDG_STATE_HOME or HOME)");
        return false;
    }
    bool ok = journal_write(path, line, why, whycap);
    if (ok)
        journal_copy_to_syslog(syslog, line);
    free(def);
    return ok;
}

bool journal_append(const char *path, const rd_journal_rec *rec, char *why, size_t whycap)
{
    char *line = journal_line(rec);
    bool ok = journal_write_line(path, line, rec->syslog, why, whycap);
    free(line);
    return ok;
}

static char *get_str(const cJSON *o, const char *k) { return json_strdup(o, k, SIZE_MAX); }

static void parse_entry(const char *line, size_t len, rd_journal_entry *e)
{
    memset(e, 0, sizeof *e);
    e->raw = xstrndup(line, len < JOURNAL_RAW_CAP ? len : JOURNAL_RAW_CAP);
    cJSON *o = cJSON_ParseWithLength(line, len);
    const cJSON *act = o ? cJSON_GetObjectItemCaseSensitive(o, "action") : NULL;
    if (!cJSON_IsObject(o) || !cJSON_IsString(act)) {
        e->malformed = true;
        cJSON_Delete(o);
        return;
    }
    e->time = get_str(o, "time");
    e->operator_ = get_str(o, "operator");
    e->system = get_str(o, "system");
    e->action = get_str(o, "action");
    e->idempotency_key = get_str(o, "idempotency_key");
    e->result = get_str(o, "result");
    e->code = get_str(o, "code");
    e->batch = get_str(o, "batch");
    e->fp = get_str(o, "fp");
    e->override_ = get_str(o, "override");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "attempt");
    if (cJSON_IsNumber(at) && at->valuedouble >= 1 && at->valuedouble < 1e9)
        e->attempt = (int)at->valuedouble;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "http_status");
    if (cJSON_IsNumber(st) && st->valuedouble >= 0 && st->valuedouble < 1000)
        e->http_status = (long)st->valuedouble;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "targets");
    if (cJSON_IsArray(t)) {
        int n = cJSON_GetArraySize(t);
        e->targets = xcalloc((size_t)n + 1, sizeof *e->targets);
        const cJSON *it;
        cJSON_ArrayForEach(it, t)
            if (cJSON_IsString(it))
                e->targets[e->n_targets++] = xstrdup(it->valuestring);
    }
    cJSON_Delete(o);
}

static void entry_free(rd_journal_entry *e)
{
    free(e->raw);
    free(e->time);
    free(e->operator_);
    free(e->system);
    free(e->action);
    free(e->idempotency_key);
    free(e->result);
    free(e->code);
    free(e->batch);
    free(e->fp);
    free(e->override_);
    for (size_t j = 0; j < e->n_targets; j++)
        free(e->targets[j]);
    free(e->targets);
}

static bool is_pending(const rd_journal_entry *e)
{
    return !e->malformed && e->code && strcmp(e->code, "pending") == 0;
}

static bool same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* One row per action with its latest state: an outcome line takes the place of the latest
 * "pending" line of the same key and action that has no outcome yet (a deliberate re-send
 * with the same key is a new pending line, so a new row). Returns the rows left. */
static size_t journal_fold(rd_journal_entry *e, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        rd_journal_entry x = e[i];
        if (!x.malformed && x.idempotency_key && !is_pending(&x)) {
            for (size_t j = out; j-- > 0;) {
                if (!is_pending(&e[j]) || !same_str(e[j].idempotency_key, x.idempotency_key) ||
                    !same_str(e[j].action, x.action))
                    continue;
                entry_free(&e[j]);
                memmove(&e[j], &e[j + 1], (out - j - 1) * sizeof *e);
                out--;
                break;
            }
        }
        e[out++] = x;
    }
    return out;
}

size_t journal_piece_end(const char *p, size_t len)
{
    static const char start[] = "{\"time\":";
    const char *next = len > 1 ? memmem(p + 1, len - 1, start, sizeof start - 1) : NULL;
    return next ? (size_t)(next - p) : len;
}

bool journal_line_parses(const char *p, size_t len)
{
    cJSON *o = cJSON_ParseWithLength(p, len);
    bool ok = cJSON_IsObject(o);
    cJSON_Delete(o);
    return ok;
}

typedef struct tail_lines {
    const char **starts;
    size_t *lens;
    size_t n, cap, lcap;
} tail_lines;

static void tail_add(tail_lines *t, const char *p, size_t len)
{
    xgrow(&t->starts, &t->cap, t->n + 1, sizeof *t->starts);
    xgrow(&t->lens, &t->lcap, t->n + 1, sizeof *t->lens);
    t->starts[t->n] = p;
    t->lens[t->n++] = len;
}

/* One line of the file: one entry, or, when it does not parse and holds more than one
 * record start, one per piece (a fragment and the line glued to it). */
static void tail_line(tail_lines *t, const char *p, size_t len)
{
    if (journal_piece_end(p, len) == len || journal_line_parses(p, len)) {
        tail_add(t, p, len);
        return;
    }
    for (size_t off = 0, n; off < len; off += n) {
        n = journal_piece_end(p + off, len - off);
        tail_add(t, p + off, n);
    }
}

static char *read_tail_bytes(int fd, off_t size, size_t *len, bool *partial_first)
{
    off_t start = size > JOURNAL_TAIL_BYTES ? size - JOURNAL_TAIL_BYTES : 0;
    size_t want = (size_t)(size - start), got = 0;
    char *buf = xmalloc(want + 1);
    while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, start + (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    *len = got;
    *partial_first = start > 0;
    return buf;
}

bool journal_read_tail(const char *path, size_t max, rd_journal_entry **out, size_t *n,
                       char *why, size_t whycap)
{
    *out = NULL;
    *n = 0;
    char *def = NULL;
    if (!path && !(path = def = journal_default_path()))
        return true;
    /* a FIFO put there must not hang the console's start; lines others could have
     * written are not ours to show */
    struct stat st;
    int fd = fsperm_parents_ok(path, "journal", why, whycap)
           ? fsperm_open(path, O_RDONLY, 0, "journal", FSP_REGULAR, &st, why, whycap) : -1;
    bool missing = fd < 0 && errno == ENOENT;
    free(def);
    if (missing && whycap)
        why[0] = '\0';          /* no journal yet: nothing to say */
    if (fd < 0)
        return missing;
    if (st.st_size == 0 || max == 0) {
        close(fd);
        return true;
    }
    size_t len;
    bool partial;
    char *buf = read_tail_bytes(fd, st.st_size, &len, &partial);
    close(fd);
    /* Collect line starts, keep the last `max` non-empty lines. */
    tail_lines t = {0};
    const char *p = buf, *end = buf + len;
    if (partial) {
        const char *nl = memchr(p, '\n', len);
        p = nl ? nl + 1 : end;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p)
            tail_line(&t, p, (size_t)(le - p));
        p = le + 1;
    }
    const char **starts = t.starts;
    size_t *lens = t.lens, cnt = t.n;
    /* an action is two lines (pending, outcome): read twice as many, fold, keep max */
    size_t want = max > SIZE_MAX / 2 ? SIZE_MAX : 2 * max;
    size_t first = cnt > want ? cnt - want : 0;
    if (cnt > first) {
        rd_journal_entry *e = xcalloc(cnt - first, sizeof *e);
        size_t k = 0;
        for (size_t i = first; i < cnt; i++)
            parse_entry(starts[i], lens[i], &e[k++]);
        k = journal_fold(e, k);
        size_t drop = k > max ? k - max : 0;
        for (size_t i = 0; i < drop; i++)
            entry_free(&e[i]);
        memmove(e, e + drop, (k - drop) * sizeof *e);
        *out = e;
        *n = k - drop;
    }
    free(starts);
    free(lens);
    free(buf);
    return true;
}

void journal_entries_free(rd_journal_entry *e, size_t n)
{
    if (!e)
        return;
    for (size_t i = 0; i < n; i++)
        entry_free(&e[i]);
    free(e);
}

rd_retry_record *journal_retries(const rd_journal_entry *e, size_t ne, const char *system,
                                 size_t *n)
{
    rd_retry_record *v = ne ? xcalloc(ne, sizeof *v) : NULL;
    *n = 0;
    for (size_t i = 0; i < ne; i++) {
        const rd_journal_entry *j = &e[i];
        if (j->malformed || !j->action || strcmp(j->action, "retry") != 0 || !j->code ||
            strcmp(j->code, "ok") != 0 || j->n_targets != 1 || !system || !j->system ||
            strcmp(j->system, system) != 0)
            continue;
        v[(*n)++] = (rd_retry_record){j->targets[0], j->fp, j->attempt};
    }
    if (!*n) {
        free(v);
        v = NULL;
    }
    return v;
}
