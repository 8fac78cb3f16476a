// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A daemon's journal (see journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "finish.h"
#include "hook.h"
#include "jrec.h"
#include "journal.h"
#include "pu_buf.h"

#define FLUSH_DELAY_MS    100
#define SNAPSHOT_MIN      (1 << 20) /* compact past this size ... */
#define SNAPSHOT_FACTOR   4         /* ... and this many times the last snapshot */
#define ALLOC_AHEAD       (1 << 20) /* room kept past the end of the file */
#define KEEP_FINISHED     32        /* finished windows a snapshot keeps */
#define LINE_MAX_BYTES    (256u << 20)
#define JOURNAL_MAX_BYTES (1ll << 30) /* a larger file is refused, not read */

typedef pu_sbuf_t buf_t;

struct pd_journal {
    pd_node_t *n;
    char path[PD_PATH_MAX + 128];
    char part[PD_PATH_MAX + 136];
    char *instance;
    char coord[64];
    int fd;
    int64_t size, alloc, snapshot_size;
    buf_t pending;      /* encoded records not written yet */
    buf_t tail;         /* written while a snapshot was being written */
    bool compacting;    /* a snapshot is being written aside */
    int64_t snap_retry; /* no snapshot before this (ms) */
    bool dirty;         /* windows may be marked */
    bool unsynced;      /* written since the last fdatasync */
    bool syncing;       /* an fdatasync is running */
    bool errlogged;
    uv_timer_t timer;
    bool timer_ready, stopped;
    pd_journal_stats_t st;
};

/* ---- encoding ---- */

/* An append; on failure the buffer is as it was and the next may succeed. */
static int put(buf_t *b, const char *s, size_t len)
{
    pu_sbuf_put(b, s, len);
    if (b->oom) {
        b->oom = false;
        return PROFD_ENOMEM;
    }
    return 0;
}

/* One record, a line of its own. */
static int put_rec(pd_journal_t *j, buf_t *b, const pp_jrec_t *r)
{
    char *text;
    size_t len;
    int rv = pp_record_encode(&pp_desc_jrec, r, false, &text, &len);
    if (rv == 0) {
        rv = put(b, text, len);
        if (rv == 0) {
            rv = put(b, "\n", 1);
        }
        free(text);
        j->st.records++;
    }
    return rv;
}

static void rec_init(pd_journal_t *j, pp_jrec_t *r, pp_jrec_kind_t kind)
{
    pp_record_init(&pp_desc_jrec, r);
    r->kind = kind;
    r->gen = j->n->gen;
}

static uint32_t id_gen(const pd_registry_t *reg)
{
    uint32_t g = reg->gen_floor;
    for (size_t i = 0; i < reg->cap; i++) {
        g = reg->gens[i] > g ? reg->gens[i] : g;
    }
    return g;
}

static int put_head(pd_journal_t *j, buf_t *b)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_HEAD);
    r.head.version = 1;
    r.head.instance = j->instance;
    r.head.gen = j->n->gen;
    r.head.next_id = j->n->win->next_id;
    r.head.coordinator = j->coord[0] ? j->coord : NULL;
    r.head.id_gen = id_gen(j->n->reg);
    return put_rec(j, b, &r);
}

static int put_rank(pd_journal_t *j, buf_t *b, const pd_rank_t *k)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_RANK);
    int rv = pd_jrec_rank(k, &r.rank);
    if (rv == 0) {
        rv = put_rec(j, b, &r);
        pd_jrec_rank_free(&r.rank);
    }
    return rv;
}

static int put_window(pd_journal_t *j, buf_t *b, const pd_window_t *w)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_WINDOW);
    pd_jrec_window(w, &r.window);
    pd_hook_record(j->n->hook, w->id, &r.window);
    return put_rec(j, b, &r);
}

static int put_member(pd_journal_t *j, buf_t *b, const pd_window_t *w, size_t i)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_MEMBER);
    r.id = w->id;
    r.index = (int64_t)i;
    int rv = pd_jrec_member(w, i, &r.member);
    if (rv == 0) {
        rv = put_rec(j, b, &r);
        pd_jrec_member_free(&r.member);
    }
    return rv;
}

/* What was marked since the last time: windows and members. */
static int collect(pd_journal_t *j)
{
    int rv = 0;
    j->dirty = false;
    for (pd_window_t *w = j->n->win->head; w && rv == 0; w = w->next) {
        if (w->jdirty && (rv = put_window(j, &j->pending, w)) == 0) {
            w->jdirty = false;
        }
        for (size_t i = 0; i < w->nmembers && rv == 0; i++) {
            if (w->members[i].jdirty && (rv = put_member(j, &j->pending, w, i)) == 0) {
                w->members[i].jdirty = false;
            }
        }
    }
    return rv;
}

/* ---- writing ---- */

static void log_error(pd_journal_t *j, const char *what)
{
    j->st.write_errors++;
    if (!j->errlogged) {
        PD_LOG(j->n->log, PD_LOG_ERROR, "journal", "%s %s: %s (kept in memory, written later)",
               what, j->path, strerror(errno));
        j->errlogged = true;
    }
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

typedef struct sync_job {
    uv_work_t work;
    pd_journal_t *j;
    int fd;
    int rv;
} sync_job_t;

static void sync_work(uv_work_t *w)
{
    sync_job_t *s = w->data;
    s->rv = fdatasync(s->fd);
    close(s->fd);
}

static void sync_after(uv_work_t *w, int status)
{
    sync_job_t *s = w->data;
    pd_journal_t *j = s->j;
    (void)status;
    free(s);
    if (j == NULL) {
        return;
    }
    j->syncing = false;
    j->st.syncs++;
    if (j->unsynced && !j->stopped) {
        pd_journal_dirty(j); /* another round */
    }
}

static void sync_soon(pd_journal_t *j)
{
    if (j->syncing || !j->unsynced || j->fd < 0 || j->stopped) {
        return;
    }
    sync_job_t *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->fd = fcntl(j->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        free(s);
        return;
    }
    s->j = j;
    s->work.data = s;
    if (uv_queue_work(&j->n->loop->uv, &s->work, sync_work, sync_after) != 0) {
        close(s->fd);
        free(s);
        return;
    }
    j->syncing = true;
    j->unsynced = false;
}

/* Keep room past the end: a full disk does not stop the next records. */
static void alloc_ahead(pd_journal_t *j)
{
    if (j->fd >= 0 && j->size + ALLOC_AHEAD / 4 > j->alloc &&
        fallocate(j->fd, FALLOC_FL_KEEP_SIZE, (off_t)j->size, ALLOC_AHEAD) == 0) {
        j->alloc = j->size + ALLOC_AHEAD;
    }
}

static void snapshot_begin(pd_journal_t *j);

/* Write the pending records (page cache: a killed daemon does not lose
 * them). */
static void write_pending(pd_journal_t *j)
{
    if (j->pending.len == 0 || j->fd < 0) {
        return;
    }
    if (write_all(j->fd, j->pending.p, j->pending.len) != 0) {
        /* a torn line is ignored when read; the whole batch is written again */
        log_error(j, "cannot write");
        struct stat st;
        if (fstat(j->fd, &st) == 0 && st.st_size > j->size && ftruncate(j->fd, j->size) != 0) {
            log_error(j, "cannot cut");
        }
        return;
    }
    j->errlogged = false;
    if (j->compacting && put(&j->tail, j->pending.p, j->pending.len) != 0) {
        j->compacting = false; /* the snapshot would miss them: give it up */
    }
    j->size += (int64_t)j->pending.len;
    j->st.bytes += (int64_t)j->pending.len;
    j->pending.len = 0;
    j->unsynced = true;
    alloc_ahead(j);
    if (!j->compacting && j->size > SNAPSHOT_MIN && j->size > SNAPSHOT_FACTOR * j->snapshot_size &&
        pd_now_ms() >= j->snap_retry) {
        snapshot_begin(j);
    }
}

void pd_journal_sync(pd_journal_t *j)
{
    if (j == NULL) {
        return;
    }
    if (j->dirty && collect(j) != 0) {
        PD_LOG(j->n->log, PD_LOG_ERROR, "journal", "out of memory encoding records");
    }
    write_pending(j);
    sync_soon(j);
}

static void on_timer(uv_timer_t *t)
{
    pd_journal_sync(t->data);
}

void pd_journal_dirty(pd_journal_t *j)
{
    if (j == NULL) {
        return;
    }
    j->dirty = true;
    if (j->timer_ready && !j->stopped && !uv_is_active((uv_handle_t *)&j->timer)) {
        uv_timer_start(&j->timer, on_timer, FLUSH_DELAY_MS, 0);
    }
}

void pd_journal_rank(pd_journal_t *j, const pd_rank_t *k)
{
    if (j && k->node_client == 0) {
        put_rank(j, &j->pending, k);
        pd_journal_dirty(j);
    }
}

void pd_journal_rank_gone(pd_journal_t *j, int64_t id)
{
    if (j == NULL) {
        return;
    }
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_RANK_GONE);
    r.id = id;
    put_rec(j, &j->pending, &r);
    pd_journal_dirty(j);
}

void pd_journal_coordinator(pd_journal_t *j, const char *instance)
{
    if (j == NULL || strcmp(j->coord, instance) == 0) {
        return;
    }
    snprintf(j->coord, sizeof(j->coord), "%s", instance);
    put_head(j, &j->pending);
    pd_journal_sync(j);
}

/* ---- snapshots ---- */

typedef struct snap_job {
    uv_work_t work;
    pd_journal_t *j;
    buf_t text;
    char part[PD_PATH_MAX + 136];
    int rv, err;
} snap_job_t;

static void snap_work(uv_work_t *w)
{
    snap_job_t *s = w->data;
    int fd = open(s->part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    s->rv = fd < 0 || write_all(fd, s->text.p, s->text.len) != 0 || fdatasync(fd) != 0 ? -1 : 0;
    s->err = errno;
    if (fd >= 0) {
        close(fd);
    }
}

static void snap_after(uv_work_t *w, int status)
{
    snap_job_t *s = w->data;
    pd_journal_t *j = s->j;
    (void)status;
    if (j == NULL) {
        unlink(s->part);
        free(s->text.p);
        free(s);
        return;
    }
    bool ok = s->rv == 0 && j->compacting;
    int fd = -1;
    if (ok) {
        /* what was written meanwhile goes after it, then it replaces the file */
        fd = open(s->part, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        ok = fd >= 0 && write_all(fd, j->tail.p, j->tail.len) == 0 && rename(s->part, j->path) == 0;
        s->err = errno;
    }
    if (ok) {
        close(j->fd);
        j->fd = fd;
        j->snapshot_size = (int64_t)s->text.len;
        j->size = (int64_t)(s->text.len + j->tail.len);
        j->alloc = j->size;
        j->unsynced = true;
        j->st.snapshots++;
        j->st.snapshot_bytes = j->snapshot_size;
        alloc_ahead(j);
        sync_soon(j);
    } else {
        if (fd >= 0) {
            close(fd);
        }
        unlink(s->part);
        errno = s->err;
        if (s->rv != 0 || j->compacting) {
            log_error(j, "cannot write a snapshot of");
        }
        j->snap_retry = pd_now_ms() + 10000;
    }
    j->compacting = false;
    j->tail.len = 0;
    free(s->text.p);
    free(s);
}

static bool finished(const pd_window_t *w)
{
    return w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED;
}

/* The whole state: head, ranks, the unfinished windows and the most
 * recent finished ones, with their members. */
static int snapshot_text(pd_journal_t *j, buf_t *b)
{
    size_t nfin = 0, skip;
    int rv = put_head(j, b);
    for (pd_rank_t *k = pd_registry_next(j->n->reg, NULL); k && rv == 0;
         k = pd_registry_next(j->n->reg, k)) {
        if (k->node_client == 0) {
            rv = put_rank(j, b, k);
        }
    }
    for (pd_window_t *w = j->n->win->head; w; w = w->next) {
        nfin += finished(w);
    }
    skip = nfin > KEEP_FINISHED ? nfin - KEEP_FINISHED : 0;
    for (pd_window_t *w = j->n->win->head; w && rv == 0; w = w->next) {
        if (finished(w) && skip > 0) {
            skip--;
            continue;
        }
        rv = put_window(j, b, w);
        for (size_t i = 0; i < w->nmembers && rv == 0; i++) {
            rv = put_member(j, b, w, i);
        }
        w->jdirty = false;
        for (size_t i = 0; i < w->nmembers; i++) {
            w->members[i].jdirty = false;
        }
    }
    return rv;
}

static void snapshot_begin(pd_journal_t *j)
{
    int64_t t0 = pd_now_us();
    snap_job_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return;
    }
    /* what is marked is in the file already (write_pending ran) */
    if (snapshot_text(j, &s->text) != 0) {
        free(s->text.p);
        free(s);
        return;
    }
    j->st.snapshot_us = pd_now_us() - t0;
    s->j = j;
    snprintf(s->part, sizeof(s->part), "%s", j->part);
    s->work.data = s;
    if (uv_queue_work(&j->n->loop->uv, &s->work, snap_work, snap_after) != 0) {
        free(s->text.p);
        free(s);
        return;
    }
    j->compacting = true;
    j->tail.len = 0;
}

/* ---- reading back ---- */

typedef struct loader {
    pd_journal_t *j;
    pp_jrank_t *ranks; /* the latest record of each live rank */
    size_t nranks, capranks;
    int64_t gen, next_id;
    uint32_t id_gen;
    bool head;
} loader_t;

static int rank_slot(loader_t *l, int64_t id)
{
    for (size_t i = 0; i < l->nranks; i++) {
        if (l->ranks[i].id == id) {
            return (int)i;
        }
    }
    return -1;
}

static int apply_rec(loader_t *l, pp_jrec_t *r, char *why, size_t whylen)
{
    pd_journal_t *j = l->j;
    pd_node_t *n = j->n;
    int i;
    if (r->gen > l->gen) {
        l->gen = r->gen;
    }
    switch (r->kind) {
    case PP_JR_HEAD:
        if (r->head.version != 1 || strlen(r->head.instance) == 0 ||
            strlen(r->head.instance) >= 24) {
            snprintf(why, whylen, "unknown version or instance");
            return PROFD_ECONFIG;
        }
        snprintf(j->instance, 24, "%s", r->head.instance);
        snprintf(j->coord, sizeof(j->coord), "%s",
                 r->head.coordinator && strlen(r->head.coordinator) < 64 ? r->head.coordinator
                                                                         : "");
        l->gen = r->head.gen > l->gen ? r->head.gen : l->gen;
        l->next_id = r->head.next_id > l->next_id ? r->head.next_id : l->next_id;
        if (r->head.id_gen > (int64_t)l->id_gen && r->head.id_gen < (1LL << 32)) {
            l->id_gen = (uint32_t)r->head.id_gen;
        }
        l->head = true;
        return 0;
    case PP_JR_RANK:
        if (r->rank.id <= 0) {
            snprintf(why, whylen, "a rank is not valid");
            return PROFD_ECONFIG;
        }
        if ((uint32_t)((uint64_t)r->rank.id >> 32) > l->id_gen) {
            l->id_gen = (uint32_t)((uint64_t)r->rank.id >> 32);
        }
        if ((i = rank_slot(l, r->rank.id)) >= 0) {
            pp_record_free(&pp_desc_jrank, &l->ranks[i]);
        } else {
            if (PU_GROW(l->ranks, l->capranks, l->nranks + 1) != 0) {
                return PROFD_ENOMEM;
            }
            i = (int)l->nranks++;
        }
        l->ranks[i] = r->rank; /* moved */
        pp_record_init(&pp_desc_jrank, &r->rank);
        return 0;
    case PP_JR_RANK_GONE:
        if ((i = rank_slot(l, r->id)) >= 0) {
            pp_record_free(&pp_desc_jrank, &l->ranks[i]);
            l->ranks[i] = l->ranks[--l->nranks];
        }
        return 0;
    case PP_JR_WINDOW: {
        const pp_state_window_t *sw = &r->window;
        if (sw->root_len < 1 || sw->dir == NULL || sw->job == NULL || sw->name == NULL ||
            !pd_confine_window_dir(sw->dir, (size_t)sw->root_len, sw->job, sw->name)) {
            snprintf(why, whylen, "window %lld: its folder is not <save_path>/<job>/<window>",
                     (long long)sw->id);
            return PROFD_ECONFIG;
        }
        pd_window_t *w = pd_windows_get(n->win, r->window.id);
        if (w) {
            if (pd_jrec_window_update(w, &r->window, why, whylen) != 0) {
                return PROFD_ECONFIG;
            }
            return pd_hook_restore(n->hook, w, &r->window);
        }
        if ((w = pd_jrec_window_restore(&r->window, pd_now_ms(), why, whylen)) == NULL) {
            return PROFD_ECONFIG;
        }
        pd_windows_append(n->win, w);
        if (pd_hook_restore(n->hook, w, &r->window) != 0) {
            return PROFD_ENOMEM;
        }
        if (w->id > l->next_id) {
            l->next_id = w->id;
        }
        return 0;
    }
    case PP_JR_MEMBER: {
        pd_window_t *w = pd_windows_get(n->win, r->id);
        if (w == NULL || r->index < 0 ||
            pd_jrec_member_restore(w, (size_t)r->index, &r->member) != 0) {
            snprintf(why, whylen, "a window member is not valid");
            return PROFD_ECONFIG;
        }
        return 0;
    }
    default:
        snprintf(why, whylen, "unknown record");
        return PROFD_ECONFIG;
    }
}

static int64_t realtime_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* Read the file at j->path into the daemon. */
static int load(pd_journal_t *j, pd_journal_loaded_t *out, char *err, size_t errlen)
{
    pd_node_t *n = j->n;
    loader_t l = {.j = j};
    char why[256];
    int rv = 0;
    struct stat st;
    int fd;
    if ((rv = pd_confine_own_file("journal", j->path, JOURNAL_MAX_BYTES, &fd, &st, err, errlen)) !=
        0) {
        return rv == PROFD_ENOENT ? 0 : rv;
    }
    FILE *f = fdopen(fd, "re");
    if (f == NULL) {
        close(fd);
        snprintf(err, errlen, "cannot read the journal %s: %s", j->path, strerror(errno));
        return PROFD_EIO;
    }
    out->found = true;
    char *line = NULL, *next = NULL;
    size_t cap = 0, ncap = 0;
    ssize_t len = getline(&line, &cap, f), nlen;
    for (size_t no = 1; len >= 0 && rv == 0; no++, len = nlen) {
        /* read ahead: a line that does not decode may be the torn last one */
        nlen = getline(&next, &ncap, f);
        bool last = nlen < 0;
        bool whole = len > 0 && line[len - 1] == '\n';
        pp_jrec_t r;
        why[0] = '\0';
        if ((size_t)len > LINE_MAX_BYTES) {
            rv = PROFD_ECONFIG;
            snprintf(why, sizeof(why), "a line longer than %u bytes", LINE_MAX_BYTES);
        } else if (len == 1 && line[0] == '\n') {
            /* an empty line: a write cut before its record (one byte of
             * anything else is a record cut short: torn, below) */
        } else if (pp_record_decode(&pp_desc_jrec, line, (size_t)len, &r, why, sizeof(why)) != 0) {
            if (last && !whole) {
                out->torn++; /* killed in the middle of a write */
            } else {
                rv = PROFD_ECONFIG;
            }
        } else {
            rv = apply_rec(&l, &r, why, sizeof(why));
            pp_record_free(&pp_desc_jrec, &r);
            out->lines++;
        }
        if (rv != 0) {
            snprintf(err, errlen, "journal %s:%zu: %s (move the file away to start afresh)",
                     j->path, no, why[0] ? why : "cannot read it back");
        }
        char *t = line;
        line = next;
        next = t;
        size_t tc = cap;
        cap = ncap;
        ncap = tc;
    }
    free(line);
    free(next);
    fclose(f);
    if (rv == 0 && out->lines > 0 && !l.head) {
        snprintf(err, errlen, "journal %s: no head record (move the file away to start afresh)",
                 j->path);
        rv = PROFD_ECONFIG;
    }
    /* the ranks, under their ids; ids are never given twice */
    pd_registry_floor(n->reg, l.id_gen);
    for (size_t i = 0; i < l.nranks; i++) {
        if (rv == 0 && pd_jrec_rank_restore(n->reg, &l.ranks[i], n->name, pd_now_ms()) == 0) {
            out->ranks++;
        }
        pp_record_free(&pp_desc_jrank, &l.ranks[i]);
    }
    free(l.ranks);
    if (rv != 0) {
        return rv;
    }
    n->win->next_id = l.next_id > n->win->next_id ? l.next_id : n->win->next_id;
    /* a generation no worker holds yet: past any of the last run */
    int64_t now = realtime_us();
    n->gen = l.gen + 1000000 > now ? l.gen + 1000000 : now;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        out->windows++;
        w->jdirty = false;
        for (size_t i = 0; i < w->nmembers; i++) {
            w->members[i].jdirty = false;
        }
    }
    snprintf(out->coordinator, sizeof(out->coordinator), "%s", j->coord);
    return 0;
}

int pd_journal_open(pd_journal_t **out, pd_node_t *n, char *instance, size_t instance_len,
                    pd_journal_loaded_t *loaded, char *err, size_t errlen)
{
    pd_journal_t *j = calloc(1, sizeof(*j));
    struct stat st;
    memset(loaded, 0, sizeof(*loaded));
    if (j == NULL || instance_len < 24) {
        free(j);
        return PROFD_ENOMEM;
    }
    j->n = n;
    j->fd = -1;
    j->instance = instance;
    if ((size_t)snprintf(j->path, sizeof(j->path), "%s/.profd-%s.journal", n->save_path, n->name) >=
        sizeof(j->path)) {
        snprintf(err, errlen, "save_path too long for the journal");
        free(j);
        return PROFD_EINVAL;
    }
    snprintf(j->part, sizeof(j->part), "%s.part", j->path);
    unlink(j->part); /* a snapshot a stop interrupted */
    int rv = load(j, loaded, err, errlen);
    if (rv == 0) {
        j->fd =
            open(j->path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (j->fd < 0 || fstat(j->fd, &st) != 0) {
            snprintf(err, errlen, "cannot open the journal %s: %s", j->path, strerror(errno));
            rv = PROFD_EIO;
        } else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
            /* put there since it was read: never appended to */
            snprintf(err, errlen,
                     "journal %s changed while the daemon read it (not a regular file of uid %u "
                     "without group or other write): check who wrote it, then start again",
                     j->path, (unsigned)geteuid());
            rv = PROFD_EPATH;
        }
    }
    if (rv != 0) {
        if (j->fd >= 0) {
            close(j->fd);
        }
        free(j);
        return rv;
    }
    j->size = j->alloc = (int64_t)st.st_size;
    /* a torn last line: cut, so that the next record starts a line (a last
     * line read back whole but for its newline gets one) */
    char last = '\n';
    if (!loaded->torn && j->size > 0 &&
        (pread(j->fd, &last, 1, (off_t)(j->size - 1)) != 1 || last != '\n')) {
        put(&j->pending, "\n", 1);
    }
    if (loaded->torn) {
        FILE *f = fdopen(dup(j->fd), "re");
        char *line = NULL;
        size_t cap = 0;
        off_t good = 0, at = 0;
        ssize_t len;
        while (f && (len = getline(&line, &cap, f)) > 0) {
            at += len;
            if (line[len - 1] == '\n') {
                good = at;
            }
        }
        free(line);
        if (f) {
            fclose(f);
        }
        if (ftruncate(j->fd, good) == 0) {
            j->size = j->alloc = (int64_t)good;
        }
    }
    j->snapshot_size = j->size;
    /* a snapshot now: the file starts with who the daemon is */
    if (j->size == 0) {
        put_head(j, &j->pending);
    }
    alloc_ahead(j);
    *out = j;
    return 0;
}

void pd_journal_start(pd_journal_t *j)
{
    if (j == NULL) {
        return;
    }
    uv_timer_init(&j->n->loop->uv, &j->timer);
    j->timer.data = j;
    j->timer_ready = true;
    pd_journal_sync(j);
}

void pd_journal_resume(pd_journal_t *j)
{
    if (j) {
        pd_finish_resume(j->n);
    }
}

void pd_journal_stats(const pd_journal_t *j, pd_journal_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (j) {
        *out = j->st;
    }
}

void pd_journal_stop(pd_journal_t *j)
{
    if (j == NULL || j->stopped) {
        return;
    }
    pd_journal_sync(j);
    j->stopped = true;
    if (j->timer_ready) {
        uv_timer_stop(&j->timer);
        uv_close((uv_handle_t *)&j->timer, NULL);
        j->timer_ready = false;
    }
}

void pd_journal_fini(pd_journal_t *j)
{
    if (j == NULL) {
        return;
    }
    /* the loop is over: write what is left, and sync */
    if (j->dirty) {
        collect(j);
    }
    bool compacting = j->compacting;
    j->compacting = false;
    write_pending(j);
    if (j->fd >= 0) {
        if (fdatasync(j->fd) != 0) {
            log_error(j, "cannot sync");
        }
        close(j->fd);
    }
    if (compacting) {
        unlink(j->part);
    }
    free(j->pending.p);
    free(j->tail.p);
    free(j);
}
