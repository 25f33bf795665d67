/* Batch records (batchrec.h): the frozen selection of a resumable batch, and its state
 * read back from the journal. */
#include "batchrec.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/jsonget.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "batchrec_priv.h"
#include "journal.h"
#include "lineappend.h"
#include "request.h"

struct rd_batchrec {
    char id[17];
    char *tmp, *path;
    FILE *f;
    size_t n;
    bool committed;            /* renamed into place, or staged: the file stays */
};

/* STATE/batches for the journal at `journal` (NULL: the default), created 0700 with
 * create; it and every directory above it must be ours or root's and nobody else's to
 * write (fsperm_dir_ready; fsperm_dir_trusted when read: missing is no batch yet). */
static char *batch_dir(const char *journal, bool create, char *why, size_t whycap)
{
    char *def = NULL;
    if (!journal && !(journal = def = journal_default_path())) {
        snprintf(why, whycap, "no state directory (set XDG_STATE_HOME or HOME)");
        return NULL;
    }
    const char *slash = strrchr(journal, '/');
    char *dir = slash ? xasprintf("%.*s/batches", (int)(slash - journal), journal)
                      : xstrdup("batches");
    free(def);
    if (create ? !fsperm_dir_ready(dir, "batches directory", why, whycap)
               : !fsperm_dir_trusted(dir, "batches directory", why, whycap)) {
        free(dir);
        return NULL;
    }
    return dir;
}

static bool valid_id(const char *id)
{
    if (!id || strlen(id) != 16)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

/* One JSON value as a line, written and checked. */
static bool put_json(FILE *f, cJSON *o, char *why, size_t whycap)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    bool ok = s && fprintf(f, "%s\n", s) > 0;
    free(s);
    if (!ok)
        snprintf(why, whycap, "cannot write the batch record: %s", strerror(errno));
    return ok;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

rd_batchrec *batchrec_create(const char *journal, const char *system, const char *operator_,
                             rd_action kind, const char *reason, const char *selection,
                             char *why, size_t whycap)
{
    rd_batch_bound none = {0};
    return batchrec_create_bound(journal, system, &none, operator_, kind, reason, selection,
                                 why, whycap);
}

rd_batchrec *batchrec_create_bound(const char *journal, const char *system,
                                   const rd_batch_bound *bound, const char *operator_,
                                   rd_action kind, const char *reason, const char *selection,
                                   char *why, size_t whycap)
{
    char *dir = batch_dir(journal, true, why, whycap);
    if (!dir)
        return NULL;
    rd_batchrec *r = xcalloc(1, sizeof *r);
    char key[33];
    idem_key_new(key);
    memcpy(r->id, key, 16);
    r->path = xasprintf("%s/%s.batch", dir, r->id);
    r->tmp = xasprintf("%s.tmp", r->path);
    free(dir);
    int fd = fsperm_open(r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, "batch record",
                         FSP_REGULAR | FSP_PRIVATE, NULL, why, whycap);
    if (fd < 0 || !(r->f = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        free(r->tmp);
        r->tmp = NULL;
        batchrec_free(r);
        return NULL;
    }
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *h = cJSON_CreateObject();
    add_str(h, "batch", r->id);
    add_str(h, "system", system);
    if (bound->store)
        add_str(h, "store", bound->store);
    if (bound->core)
        add_str(h, "core", bound->core);
    add_str(h, "action", action_name(kind));
    add_str(h, "reason", reason);
    add_str(h, "selection", selection);
    add_str(h, "created", now);
    add_str(h, "operator", operator_);
    if (!put_json(r->f, h, why, whycap)) {
        batchrec_free(r);
        return NULL;
    }
    return r;
}

bool batchrec_add(rd_batchrec *r, const rd_target *t, char *why, size_t whycap)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateString(t->id ? t->id : ""));
    cJSON_AddItemToArray(a, t->parent ? cJSON_CreateString(t->parent) : cJSON_CreateNull());
    cJSON_AddItemToArray(a, t->fp ? cJSON_CreateString(t->fp) : cJSON_CreateNull());
    cJSON_AddItemToArray(a, cJSON_CreateNumber(t->attempt > 0 ? t->attempt : 0));
    cJSON_AddItemToArray(a, t->override_ ? cJSON_CreateString(t->override_) : cJSON_CreateNull());
    if (!put_json(r->f, a, why, whycap))
        return false;
    r->n++;
    return true;
}

size_t batchrec_count(const rd_batchrec *r) { return r->n; }
const char *batchrec_id(const rd_batchrec *r) { return r->id; }

/* The end line, synced and closed; false with why. */
static bool rec_end(rd_batchrec *r, char *why, size_t whycap)
{
    cJSON *end = cJSON_CreateObject();
    cJSON_AddNumberToObject(end, "total", (double)r->n);
    if (!put_json(r->f, end, why, whycap))
        return false;
    bool ok = fflush(r->f) == 0 && fsync(fileno(r->f)) == 0;
    ok = (fclose(r->f) == 0) && ok;
    r->f = NULL;
    if (!ok)
        snprintf(why, whycap, "cannot write the batch record %s: %s", r->tmp, strerror(errno));
    return ok;
}

bool batchrec_commit(rd_batchrec *r, char *why, size_t whycap)
{
    if (!rec_end(r, why, whycap))
        return false;
    if (rename(r->tmp, r->path) != 0) {
        snprintf(why, whycap, "cannot write the batch record %s: %s", r->path, strerror(errno));
        return false;
    }
    r->committed = true;
    return true;
}

bool batchrec_stage(rd_batchrec *r, char *why, size_t whycap)
{
    if (!rec_end(r, why, whycap))
        return false;
    r->committed = true;
    return true;
}

/* STATE/batches/ID.batch (+ ".tmp" when staged); NULL with why. */
static char *rec_path(const char *journal, const char *id, bool staged, char *why, size_t whycap)
{
    if (!valid_id(id)) {
        snprintf(why, whycap, "no batch %.40s", id ? id : "");
        return NULL;
    }
    char *dir = batch_dir(journal, false, why, whycap);
    char *path = dir ? xasprintf("%s/%s.batch%s", dir, id, staged ? ".tmp" : "") : NULL;
    free(dir);
    return path;
}

static bool read_header(const char *path, rd_batch_info *b, char *why, size_t whycap);

bool batchrec_adopt(const char *journal, const char *id, char *why, size_t whycap)
{
    char *tmp = rec_path(journal, id, true, why, whycap);
    char *path = rec_path(journal, id, false, why, whycap);
    rd_batch_info b = {0};
    bool ok = tmp && path && read_header(tmp, &b, why, whycap);
    batch_info_clear(&b);
    if (ok) {
        if (!(ok = rename(tmp, path) == 0))
            snprintf(why, whycap, "cannot write the batch record %s: %s", path, strerror(errno));
    }
    free(tmp);
    free(path);
    return ok;
}

void batchrec_discard(const char *journal, const char *id)
{
    char why[64];
    char *tmp = rec_path(journal, id, true, why, sizeof why);
    if (tmp)
        unlink(tmp);
    free(tmp);
}

void batchrec_free(rd_batchrec *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    if (!r->committed && r->tmp)
        unlink(r->tmp);
    free(r->tmp);
    free(r->path);
    free(r);
}

/* ---- reading ------------------------------------------------------------------------ */

/* Reading a record: its lines checked one by one (batchrec.h: nothing trusted as written). */
typedef struct rec_read {
    rd_batch_info *b;
    const char *path;
    size_t line, items;
    bool head, end;
    char *why;
    size_t whycap;
} rec_read;

static bool rec_damaged(rec_read *r, const char *what)
{
    if (r->line)
        snprintf(r->why, r->whycap, "batch record %s is damaged: line %zu: %s", r->path,
                 r->line, what);
    else
        snprintf(r->why, r->whycap, "batch record %s is damaged: %s", r->path, what);
    return false;
}

/* A header string: absent or null (NULL), else a string, capped and sanitized. */
static bool head_str(const cJSON *o, const char *k, size_t max, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsString(v))
        return false;
    char *cut = xstrndup(v->valuestring, max);
    *out = sanitize_str(cut, 0);
    free(cut);
    return true;
}

/* The id its file name gives: "ID.batch" or "ID.batch.tmp". */
static bool file_id(const char *path, char out[17])
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char id[17];
    snprintf(id, sizeof id, "%s", base);
    if (!valid_id(id) || strncmp(base + 16, ".batch", 6) != 0)
        return false;
    memcpy(out, id, 17);
    return true;
}

static bool rec_head(rec_read *r, const cJSON *o)
{
    rd_batch_info *b = r->b;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "batch");
    if (!cJSON_IsString(id) || strcmp(id->valuestring, b->id) != 0)
        return rec_damaged(r, "the header's batch id is not its file name's");
    rd_action kind;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(o, "action");
    if (!cJSON_IsString(act) || !action_from_name(act->valuestring, &kind))
        return rec_damaged(r, "the header's action is not one redrive knows");
    b->action = xstrdup(action_name(kind));
    const struct { const char *key; size_t max; char **field; } strs[] = {
        {"system", 256, &b->system}, {"reason", 1024, &b->reason},
        {"selection", 1024, &b->selection}, {"created", 64, &b->created},
        {"operator", 256, &b->operator_}, {"store", 1024, &b->store},
        {"core", 1024, &b->core},
    };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (!head_str(o, strs[i].key, strs[i].max, strs[i].field)) {
            char what[64];
            snprintf(what, sizeof what, "the header's %s is not a string", strs[i].key);
            return rec_damaged(r, what);
        }
    }
    r->head = true;
    return true;
}

/* {"total":N}: N a count (an integer, not 1e300, not negative); compared with the item
 * lines at the end. */
static bool rec_end_line(rec_read *r, const cJSON *tot)
{
    double n = cJSON_IsNumber(tot) ? tot->valuedouble : -1;
    if (r->end)
        return rec_damaged(r, "a second end line");
    if (!(n >= 0 && n <= 1e15 && n == (double)(size_t)n))
        return rec_damaged(r, "the end line's total is not a count");
    r->b->total = (size_t)n;
    r->end = true;
    return true;
}

/* One line (len bytes, cut: no newline at its end). */
static bool rec_line(rec_read *r, const char *line, size_t len, bool cut)
{
    if (strspn(line, " \t\r\n") == len)
        return true;
    if (r->head && line[0] == '[') {
        r->items++;
        return r->end ? rec_damaged(r, "an item after the end line") : true;
    }
    cJSON *o = cJSON_ParseWithLength(line, len);
    bool ok;
    if (!cJSON_IsObject(o))
        /* an abandon line cut by a crash: the abandon did not happen */
        ok = (cut && r->end) || rec_damaged(r, r->head ? "not a line of a batch record"
                                                       : "no header");
    else if (!r->head)
        ok = rec_head(r, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "total"))
        ok = rec_end_line(r, cJSON_GetObjectItemCaseSensitive(o, "total"));
    else if (cJSON_GetObjectItemCaseSensitive(o, "abandoned") && r->end)
        ok = r->b->abandoned = true;
    else if (r->end && cJSON_GetObjectItemCaseSensitive(o, "control"))
        /* a run, a pause, a resume, a rate: the last one counts */
        ok = batchctl_line(r->b, o) || rec_damaged(r, "a control line that cannot be read");
    else
        ok = rec_damaged(r, "not a line of a batch record");
    cJSON_Delete(o);
    return ok;
}

static bool rec_read_all(rec_read *r, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, f)) > 0) {
        r->line++;
        ok = rec_line(r, line, (size_t)len, line[len - 1] != '\n');
    }
    free(line);
    if (ok && ferror(f))
        ok = rec_damaged(r, "cannot be read");
    r->line = 0;
    if (ok && !r->head)
        ok = rec_damaged(r, "no header");
    else if (ok && !r->end)
        ok = rec_damaged(r, "no end line (not a complete batch record)");
    if (ok && r->items != r->b->total) {
        char what[128];
        snprintf(what, sizeof what, "its end line says %zu items, it has %zu", r->b->total,
                 r->items);
        ok = rec_damaged(r, what);
    }
    return ok;
}

/* The header, the end and any abandon line of the record at path, checked. false with why:
 * one gone in the meantime leaves b empty; a damaged one, or one refused (not a regular
 * file of ours), has b's id (when its file name is one), path and damaged set, nothing
 * else. */
static bool read_header(const char *path, rd_batch_info *b, char *why, size_t whycap)
{
    memset(b, 0, sizeof *b);
    rec_read r = {.b = b, .path = path, .why = why, .whycap = whycap};
    if (!file_id(path, b->id)) {
        rec_damaged(&r, "its file name is not a batch id");
    } else {
        FILE *f = batchrec_open_private(path, "batch record", why, whycap);
        if (!f && errno == ENOENT)
            return false;
        bool ok = f && rec_read_all(&r, f);
        if (f)
            fclose(f);
        b->path = xstrdup(path);
        if (ok) {
            b->running = batchrec_locked(path);
            return true;
        }
    }
    char id[17];
    memcpy(id, b->id, sizeof id);
    batch_info_clear(b);
    memcpy(b->id, id, sizeof id);
    b->path = xstrdup(path);
    b->damaged = xstrdup(why);
    return false;
}

void batch_info_clear(rd_batch_info *b)
{
    free(b->system);
    free(b->action);
    free(b->reason);
    free(b->selection);
    free(b->created);
    free(b->operator_);
    free(b->store);
    free(b->core);
    free(b->pause_reason);
    free(b->path);
    free(b->damaged);
    memset(b, 0, sizeof *b);
}

void batch_infos_free(rd_batch_info *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        batch_info_clear(&v[i]);
    free(v);
}

const char *batch_info_state(const rd_batch_info *b)
{
    if (b->damaged)
        return "damaged";
    if (b->abandoned)
        return "abandoned";
    if (b->running)            /* a process sends it now (its lock): even its last items */
        return "running";
    if (!(b->ok + b->failed + b->unknown + b->held < b->total || b->unknown))
        return "done";
    return b->paused ? "paused" : "open";
}

bool batch_info_open(const rd_batch_info *b)
{
    return !b->damaged && !b->abandoned && (b->ok + b->failed + b->unknown + b->held < b->total || b->unknown);
}

static int by_created(const void *x, const void *y)
{
    const rd_batch_info *a = x, *b = y;
    int c = strcmp(a->created ? a->created : "", b->created ? b->created : "");
    return c ? c : strcmp(a->id, b->id);
}

/* A staged record (ID.batch.tmp) that no console adopted or discarded within a day: the
 * console that asked for it is gone (a crash, a kill); nothing of it was ever sent. */
#define STAGED_MAX_AGE_S (24 * 3600)
static void stale_staged_drop(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        clock_wall() - (double)st.st_mtime > STAGED_MAX_AGE_S)
        unlink(path);
    free(path);
}

bool batchrec_list(const char *journal, rd_batch_info **out, size_t *n, char *why,
                   size_t whycap)
{
    *out = NULL;
    *n = 0;
    char *dir = batch_dir(journal, false, why, whycap);
    if (!dir)
        return false;
    DIR *d = opendir(dir);
    size_t cap = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len == 26 && strcmp(e->d_name + 16, ".batch.tmp") == 0) {
            stale_staged_drop(dir, e->d_name);
            continue;
        }
        if (len != 22 || strcmp(e->d_name + 16, ".batch") != 0)
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        char damage[512];
        rd_batch_info b;
        if (read_header(path, &b, damage, sizeof damage) || b.damaged) {
            xgrow(out, &cap, *n + 1, sizeof **out);
            (*out)[(*n)++] = b;
        }
        free(path);
    }
    if (d)
        closedir(d);
    free(dir);
    if (*n)
        qsort(*out, *n, sizeof **out, by_created);
    return batchscan_count(journal, *out, *n, why, whycap);
}

bool batchrec_running_on(const char *journal, const char *system, const char *except, char id[17])
{
    char why[256];
    char *dir = batch_dir(journal, false, why, sizeof why);
    DIR *d = dir ? opendir(dir) : NULL;
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        if (strlen(e->d_name) != 22 || strcmp(e->d_name + 16, ".batch") != 0 ||
            (except && strncmp(e->d_name, except, 16) == 0))
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        rd_batch_info b = {0};
        /* the lock first (one open and one fcntl): a record is read only when it runs */
        if (batchrec_locked(path) && read_header(path, &b, why, sizeof why)) {
            if (b.system && !strcmp(b.system, system)) {
                memcpy(id, b.id, 17);
                found = true;
            }
        }
        batch_info_clear(&b);
        free(path);
    }
    if (d)
        closedir(d);
    free(dir);
    return found;
}

bool batchrec_find(const char *journal, const char *id, rd_batch_info *out, char *why,
                   size_t whycap)
{
    memset(out, 0, sizeof *out);
    if (!valid_id(id)) {
        snprintf(why, whycap, "not a batch id (16 hex digits): see redrive batch list");
        return false;
    }
    char *dir = batch_dir(journal, false, why, whycap);
    if (!dir)
        return false;
    char *path = xasprintf("%s/%s.batch", dir, id);
    free(dir);
    bool ok = access(path, F_OK) == 0;
    if (!ok)
        snprintf(why, whycap, "no batch %s (see redrive batch list)", id);
    else
        ok = read_header(path, out, why, whycap) &&
             batchscan_count(journal, out, 1, why, whycap);
    if (!ok)
        batch_info_clear(out);   /* the damage is in why */
    free(path);
    return ok;
}

bool batchrec_abandon(const rd_batch_info *b, const char *operator_, char *why, size_t whycap)
{
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *o = cJSON_CreateObject();
    add_str(o, "abandoned", now);
    add_str(o, "operator", operator_);
    return batchrec_append(b, o, why, whycap);
}
