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
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "journal.h"
#include "request.h"

struct rd_batchrec {
    char id[17];
    char *tmp, *path;
    FILE *f;
    size_t n;
    bool committed;            /* renamed into place, or staged: the file stays */
};

struct rd_batchrd {
    FILE *f;
    char *line;
    size_t cap, next;
    cJSON *cur;
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
    rd_batch_info b;
    bool ok = tmp && path && read_header(tmp, &b, why, whycap);
    if (ok) {
        batch_info_clear(&b);
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

static FILE *open_private(const char *path, const char *what, char *why, size_t whycap)
{
    int fd = fsperm_open(path, O_RDONLY | O_NOFOLLOW, 0, what, FSP_REGULAR, NULL, why, whycap);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    return f;
}

/* The header, the end and any abandon line of the record at path. */
static bool read_header(const char *path, rd_batch_info *b, char *why, size_t whycap)
{
    memset(b, 0, sizeof *b);
    FILE *f = open_private(path, "batch record", why, whycap);
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool head = false, end = false;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[0] != '{')
            continue;
        cJSON *o = cJSON_ParseWithLength(line, (size_t)len);
        const cJSON *tot = cJSON_GetObjectItemCaseSensitive(o, "total");
        if (!head && cJSON_IsObject(o)) {
            head = true;
            char *id = json_strdup(o, "batch", 64);
            if (valid_id(id))
                memcpy(b->id, id, 17);
            free(id);
            b->system = json_strdup(o, "system", 256);
            b->action = json_strdup(o, "action", 64);
            b->reason = json_strdup(o, "reason", 1024);
            b->selection = json_strdup(o, "selection", 1024);
            b->created = json_strdup(o, "created", 64);
            b->operator_ = json_strdup(o, "operator", 256);
        } else if (cJSON_IsNumber(tot) && tot->valuedouble >= 0 && tot->valuedouble < 1e12) {
            b->total = (size_t)tot->valuedouble;
            end = true;
        } else if (cJSON_GetObjectItemCaseSensitive(o, "abandoned")) {
            b->abandoned = true;
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    b->path = xstrdup(path);
    if (!head || !end || !b->id[0] || !b->action) {
        snprintf(why, whycap, "%s: not a complete batch record", path);
        batch_info_clear(b);
        return false;
    }
    return true;
}

void batch_info_clear(rd_batch_info *b)
{
    free(b->system);
    free(b->action);
    free(b->reason);
    free(b->selection);
    free(b->created);
    free(b->operator_);
    free(b->path);
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
    if (b->abandoned)
        return "abandoned";
    return b->ok + b->failed + b->unknown < b->total || b->unknown ? "open" : "done";
}

/* The scan's view of one batch: its states and (when asked) its unknown items' keys. */
typedef struct scan_batch {
    rd_batch_info *info;
    unsigned char *st;
    rd_bitem_key *keys;
    size_t nkeys, capkeys;
    bool want_keys;
} scan_batch;

static void key_set(scan_batch *s, size_t item, const char *key, bool keep)
{
    size_t k = s->nkeys;
    while (k-- > 0 && s->keys[k].item != item)
        ;
    if (k == (size_t)-1 && keep && key && strlen(key) == 32) {
        xgrow(&s->keys, &s->capkeys, s->nkeys + 1, sizeof *s->keys);
        k = s->nkeys++;
    }
    if (k == (size_t)-1)
        return;
    if (!keep) {
        s->keys[k] = s->keys[--s->nkeys];
        return;
    }
    if (key && strlen(key) == 32) {
        s->keys[k].item = item;
        memcpy(s->keys[k].key, key, 33);
    }
}

/* One journal line of a batch item: its item's state after it. */
static void scan_line(scan_batch *s, const cJSON *o)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "item");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
    if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble >= (double)s->info->total ||
        !cJSON_IsString(code))
        return;
    size_t i = (size_t)it->valuedouble;
    const char *c = code->valuestring;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "idempotency_key");
    const char *key = cJSON_IsString(k) ? k->valuestring : NULL;
    rd_bitem st;
    if (!strcmp(c, "pending") || !strcmp(c, "unknown") || !strcmp(c, "maybe_applied"))
        st = BITEM_UNKNOWN;
    else if (!strcmp(c, "ok"))
        st = BITEM_OK;
    else if (!strcmp(c, "aborted"))
        st = BITEM_NONE;         /* journaled, stopped before being sent again */
    else
        st = BITEM_FAILED;
    s->st[i] = (unsigned char)st;
    if (s->want_keys)
        key_set(s, i, key, st == BITEM_UNKNOWN);
}

/* One pass over the journal for the batches v[0..n). */
static bool scan_journal(const char *journal, scan_batch *v, size_t n, char *why, size_t whycap)
{
    char *def = NULL;
    if (!journal && !(journal = def = journal_default_path()))
        return true;
    FILE *f = open_private(journal, "journal", why, whycap);
    bool missing = !f && errno == ENOENT;
    free(def);
    if (!f)
        return missing;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        const char *b = strstr(line, "\"batch\"");
        if (!b || !strstr(line, "\"item\""))
            continue;
        b += 7;
        b += strspn(b, " \t");
        b += *b == ':';
        b += strspn(b, " \t");
        b += *b == '"';
        for (size_t k = 0; k < n; k++) {
            if (strncmp(b, v[k].info->id, 16) != 0 || b[16] != '"')
                continue;
            cJSON *o = cJSON_ParseWithLength(line, (size_t)len);
            char *bid = json_strdup(o, "batch", 64);
            if (bid && strcmp(bid, v[k].info->id) == 0)
                scan_line(&v[k], o);
            free(bid);
            cJSON_Delete(o);
            break;
        }
    }
    free(line);
    fclose(f);
    return true;
}

static void count_states(rd_batch_info *b, const unsigned char *st)
{
    b->ok = b->failed = b->unknown = 0;
    for (size_t i = 0; i < b->total; i++) {
        b->ok += st[i] == BITEM_OK;
        b->failed += st[i] == BITEM_FAILED;
        b->unknown += st[i] == BITEM_UNKNOWN;
    }
}

/* The counts of v[0..n) from the journal. */
static bool count_all(const char *journal, rd_batch_info *v, size_t n, char *why, size_t whycap)
{
    scan_batch *s = xcalloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        s[i].info = &v[i];
        s[i].st = xcalloc(v[i].total ? v[i].total : 1, 1);
    }
    bool ok = scan_journal(journal, s, n, why, whycap);
    for (size_t i = 0; i < n; i++) {
        count_states(&v[i], s[i].st);
        free(s[i].st);
    }
    free(s);
    return ok;
}

bool batchrec_states(const char *journal, const rd_batch_info *b, unsigned char **states,
                     rd_bitem_key **keys, size_t *nkeys, char *why, size_t whycap)
{
    rd_batch_info copy = *b;
    scan_batch s = {.info = &copy, .st = xcalloc(b->total ? b->total : 1, 1), .want_keys = true};
    bool ok = scan_journal(journal, &s, 1, why, whycap);
    *states = s.st;
    *keys = s.keys;
    *nkeys = s.nkeys;
    return ok;
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
        char ignored[256];
        rd_batch_info b;
        if (read_header(path, &b, ignored, sizeof ignored)) {
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
    return count_all(journal, *out, *n, why, whycap);
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
        ok = read_header(path, out, why, whycap) && count_all(journal, out, 1, why, whycap);
    free(path);
    return ok;
}

bool batchrec_abandon(const rd_batch_info *b, const char *operator_, char *why, size_t whycap)
{
    int fd = fsperm_open(b->path, O_WRONLY | O_APPEND | O_NOFOLLOW, 0, "batch record",
                         FSP_REGULAR, NULL, why, whycap);
    if (fd < 0)
        return false;
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *o = cJSON_CreateObject();
    add_str(o, "abandoned", now);
    add_str(o, "operator", operator_);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *line = xasprintf("%s\n", s);
    size_t len = strlen(line);
    bool ok = write(fd, line, len) == (ssize_t)len && fsync(fd) == 0;
    if (!ok)
        snprintf(why, whycap, "cannot write the batch record %s: %s", b->path, strerror(errno));
    close(fd);
    free(s);
    free(line);
    return ok;
}

/* ---- the items, streamed ------------------------------------------------------------ */

rd_batchrd *batchrd_open(const char *path, char *why, size_t whycap)
{
    FILE *f = open_private(path, "batch record", why, whycap);
    if (!f)
        return NULL;
    rd_batchrd *r = xcalloc(1, sizeof *r);
    r->f = f;
    return r;
}

static const char *arr_str(const cJSON *a, int i)
{
    const cJSON *x = cJSON_GetArrayItem(a, i);
    return cJSON_IsString(x) && x->valuestring[0] ? x->valuestring : NULL;
}

bool batchrd_next(rd_batchrd *r, size_t *item, rd_target *t)
{
    cJSON_Delete(r->cur);
    r->cur = NULL;
    ssize_t len;
    while ((len = getline(&r->line, &r->cap, r->f)) > 0) {
        if (r->line[0] != '[')
            continue;
        cJSON_Delete(r->cur);
        r->cur = cJSON_ParseWithLength(r->line, (size_t)len);
        size_t i = r->next++;
        const char *id = arr_str(r->cur, 0);
        if (!id)
            continue;         /* unreadable: counted, never sent */
        const cJSON *at = cJSON_GetArrayItem(r->cur, 3);
        *t = (rd_target){.id = id, .parent = arr_str(r->cur, 1), .fp = arr_str(r->cur, 2),
                         .attempt = cJSON_IsNumber(at) ? (int)at->valuedouble : 0};
        const char *ov = arr_str(r->cur, 4);
        /* the journal's override names are static strings (guard.h): keep them so */
        t->override_ = !ov ? NULL : !strcmp(ov, "ineligible") ? "ineligible"
                     : !strcmp(ov, "loop_retry") ? "loop_retry" : NULL;
        *item = i;
        return true;
    }
    return false;
}

void batchrd_close(rd_batchrd *r)
{
    if (!r)
        return;
    cJSON_Delete(r->cur);
    fclose(r->f);
    free(r->line);
    free(r);
}
