// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A daemon's journal (see journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "finish.h"
#include "hook.h"
#include "jrec.h"
#include "journal.h"
#include "pu_buf.h"
#include "wcaps.h"

#define FLUSH_DELAY_MS  100
#define RETRY_MS        1000      /* a write failed and replies wait: tried again */
#define SNAPSHOT_MIN    (1 << 20) /* compact past this size ... */
#define SNAPSHOT_FACTOR 4         /* ... and this many times the last snapshot */
#define ALLOC_AHEAD     (1 << 20) /* room kept past the end of the file */
#define KEEP_FINISHED   32        /* finished windows a snapshot keeps */
#define BUF_KEEP        (1 << 18) /* an encode buffer emptied over 256 KiB is given back */

typedef pu_sbuf_t buf_t;

/* A reply waiting for a write that succeeds. */
typedef struct held {
    pd_req_t *req;
    char *buf;
    size_t len;
    struct held *next;
} held_t;

struct pd_journal {
    pd_node_t *n;
    pd_journal_role_t role;
    held_t *held, **held_tail; /* replies waiting for a write that succeeds */
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
    bool closing; /* the endpoints close: no reply is held any more */
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
    pp_state_kept_t kept;
    bool made = false;
    rec_init(j, &r, PP_JR_WINDOW);
    int64_t by[5];
    pd_jrec_window(w, &r.window);
    pd_hook_record(j->n->hook, w->id, &r.window);
    if (w->state == PP_WS_DONE && !w->mirror) {
        /* its manifest is written: the counts it keeps when compacted, and
         * what it keeps of its members when they are freed */
        pd_windows_captured(w, by);
        r.window.captured = by;
        r.window.captured_n = 5;
        if (w->slim) {
            r.window.kept = w->kept; /* borrowed */
        } else if (w->nmembers > 0) {
            if (pd_windows_keep(w, &kept) != 0) {
                return PROFD_ENOMEM;
            }
            r.window.kept = kept;
            made = true;
        }
    }
    int rv = put_rec(j, b, &r);
    if (made) {
        pp_record_free(&pp_desc_state_kept, &kept);
    }
    return rv;
}

static int put_member(pd_journal_t *j, buf_t *b, const pd_window_t *w, size_t i)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_MEMBER);
    j->st.members++;
    r.id = w->id;
    r.index = (int64_t)i;
    int rv = pd_jrec_member(w, i, &r.member);
    if (rv == 0) {
        rv = put_rec(j, b, &r);
        pd_jrec_member_free(&r.member);
    }
    return rv;
}

static int put_incoming(pd_journal_t *j, buf_t *b, const pd_window_t *w, size_t i)
{
    pp_jrec_t r;
    rec_init(j, &r, PP_JR_INCOMING);
    r.id = w->id;
    r.index = (int64_t)i;
    pd_jrec_incoming(w, i, &r.incoming);
    return put_rec(j, b, &r);
}

static int put_node(pd_journal_t *j, buf_t *b, const char *name, const char *instance, bool gone)
{
    pp_jrec_t r;
    rec_init(j, &r, gone ? PP_JR_NODE_GONE : PP_JR_NODE);
    pp_record_init(&pp_desc_state_node, &r.node);
    r.node.name = (char *)name;
    r.node.instance = (char *)instance;
    return put_rec(j, b, &r);
}

static int cmp_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The records of w's members (or incoming files: `incoming`) listed as
 * marked, in index order (a member's record comes before those of the
 * ones after it; a file's after its member's); the list emptied when all
 * are written. With w->jscan every flag is looked at instead. */
static int collect_marked(pd_journal_t *j, pd_window_t *w, bool incoming)
{
    size_t *list = incoming ? w->jincoming : w->jmembers;
    size_t *n = incoming ? &w->njincoming : &w->njmembers;
    /* a slim window's members, when it has any, are read back from its
     * manifest: the journal has what it keeps of them (put_window) */
    size_t count = incoming ? w->nincoming : w->slim ? 0 : w->nmembers;
    int rv = 0;
    if (!w->jscan && *n > 1) {
        qsort(list, *n, sizeof(*list), cmp_index);
    }
    for (size_t k = 0; rv == 0 && k < (w->jscan ? count : *n); k++) {
        size_t i = w->jscan ? k : list[k];
        bool *flag = i >= count ? NULL : incoming ? &w->incoming[i].jdirty : &w->members[i].jdirty;
        if (flag && *flag) {
            rv = incoming ? (j->role.coordinator ? put_incoming(j, &j->pending, w, i) : 0)
                          : put_member(j, &j->pending, w, i);
            *flag = rv != 0;
        }
    }
    if (rv == 0) {
        *n = 0;
    }
    return rv;
}

/* What was marked since the last time: windows, members, incoming files. */
static int collect(pd_journal_t *j)
{
    int rv = 0;
    j->dirty = false;
    for (pd_window_t *w = j->n->win->head; w && rv == 0; w = w->next) {
        if (w->jdirty && (rv = put_window(j, &j->pending, w)) == 0) {
            w->jdirty = false;
        }
        if (rv == 0 && (rv = collect_marked(j, w, false)) == 0 &&
            (rv = collect_marked(j, w, true)) == 0) {
            w->jscan = false;
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

/* The fdatasync on the thread pool, once the loop runs (pd_journal_start;
 * before, pd_journal_fini syncs). */
static void sync_soon(pd_journal_t *j)
{
    if (j->syncing || !j->unsynced || j->fd < 0 || j->stopped || !j->timer_ready) {
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
static void on_timer(uv_timer_t *t);

/* The held replies: sent (the journal holds what they acknowledge), or
 * dropped at stop (the endpoint frees its parked requests as it closes). */
static void release_held(pd_journal_t *j, bool send)
{
    while (j->held) {
        held_t *h = j->held;
        j->held = h->next;
        if (send) {
            pd_req_reply(h->req, h->buf, h->len);
        }
        free(h->buf);
        free(h);
    }
    j->held_tail = &j->held;
}

/* An emptied encode buffer: kept for the next records, unless a large
 * batch grew it (a window of 16,384 members: megabytes, held for good). */
static void buf_settle(buf_t *b)
{
    if (b->len == 0 && b->cap > BUF_KEEP) {
        pu_sbuf_free(b);
    }
}

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
        if (j->held && j->timer_ready && !j->stopped && !uv_is_active((uv_handle_t *)&j->timer)) {
            uv_timer_start(&j->timer, on_timer, RETRY_MS, 0); /* the replies wait */
        }
        return;
    }
    if (j->errlogged) {
        PD_LOG(j->n->log, PD_LOG_INFO, "journal", "%s is written again", j->path);
    }
    j->errlogged = false;
    if (j->compacting && put(&j->tail, j->pending.p, j->pending.len) != 0) {
        j->compacting = false; /* the snapshot would miss them: give it up */
    }
    j->size += (int64_t)j->pending.len;
    j->st.bytes += (int64_t)j->pending.len;
    j->pending.len = 0;
    buf_settle(&j->pending);
    j->unsynced = true;
    release_held(j, true);
    alloc_ahead(j);
    /* a snapshot is written on the thread pool: only while the loop runs */
    if (j->timer_ready && !j->compacting && j->size > SNAPSHOT_MIN &&
        j->size > SNAPSHOT_FACTOR * j->snapshot_size && pd_now_ms() >= j->snap_retry) {
        snapshot_begin(j);
    }
}

void pd_journal_sync(pd_journal_t *j)
{
    if (j == NULL) {
        return;
    }
    int64_t t0 = pd_now_us(), members = j->st.members;
    bool some = j->dirty || j->pending.len;
    if (j->dirty && collect(j) != 0) {
        PD_LOG(j->n->log, PD_LOG_ERROR, "journal", "out of memory encoding records");
    }
    write_pending(j);
    sync_soon(j);
    if (j->pending.len == 0 && !j->stopped) {
        pd_wcaps_settle(j->n); /* the done windows it holds: their captures stay on disk */
    }
    if (some && j->role.coordinator) { /* the figures a coordinator's whole-state saves had */
        j->n->stats.state_saves++;
        j->n->stats.state_save_us += pd_now_us() - t0;
        j->n->stats.state_encoded += j->st.members - members;
    }
}

static void on_timer(uv_timer_t *t)
{
    pd_journal_sync(t->data);
}

void pd_journal_reply(pd_journal_t *j, pd_req_t *req, char *buf, size_t len)
{
    held_t *h = NULL;
    pd_journal_sync(j);
    if (j == NULL || (j->pending.len == 0 && j->held == NULL)) {
        pd_req_reply(req, buf, len); /* the journal holds it */
        free(buf);
        return;
    }
    if (j->closing || (h = calloc(1, sizeof(*h))) == NULL || !pd_req_park(req)) {
        free(h);
        pd_req_reply_error(req, PROFD_EIO, "the daemon cannot write its journal yet");
        free(buf);
        return;
    }
    h->req = req;
    h->buf = buf;
    h->len = len;
    *j->held_tail = h;
    j->held_tail = &h->next;
    if (j->timer_ready && !uv_is_active((uv_handle_t *)&j->timer)) {
        uv_timer_start(&j->timer, on_timer, RETRY_MS, 0);
    }
}

void pd_journal_drop_replies(pd_journal_t *j)
{
    if (j) {
        pd_journal_sync(j);
        release_held(j, false);
        j->closing = true;
    }
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

void pd_journal_node(pd_journal_t *j, const char *name, const char *instance, bool gone)
{
    if (j && j->role.coordinator) {
        put_node(j, &j->pending, name, instance, gone);
        pd_journal_dirty(j);
    }
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

/* A snapshot is written as it is encoded, in pieces of about SNAP_PIECE
 * (at 16,384 ranks with their files arriving its text was 17 MB, built
 * whole on the loop: the top of the coordinator's peak); its fdatasync is
 * on the thread pool. */
#define SNAP_PIECE (1 << 18)

typedef struct snap_job {
    uv_work_t work;
    pd_journal_t *j;
    int fd;     /* the .part, written on the loop */
    size_t len; /* its bytes */
    char part[PD_PATH_MAX + 136];
    int rv, err;
} snap_job_t;

static void snap_work(uv_work_t *w)
{
    snap_job_t *s = w->data;
    s->rv = fdatasync(s->fd) != 0 ? -1 : 0;
    s->err = errno;
    close(s->fd);
}

static void snap_after(uv_work_t *w, int status)
{
    snap_job_t *s = w->data;
    pd_journal_t *j = s->j;
    (void)status;
    if (j == NULL) {
        unlink(s->part);
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
        j->snapshot_size = (int64_t)s->len;
        j->size = (int64_t)(s->len + j->tail.len);
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
    buf_settle(&j->tail);
    free(s);
}

static bool finished(const pd_window_t *w)
{
    return w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED;
}

/* b's text to fd (fd < 0: kept in b), when it holds a piece or `all`;
 * *len counts what was written. */
static int snap_flush(buf_t *b, int fd, bool all, size_t *len)
{
    if (fd < 0 || b->len == 0 || (!all && b->len < SNAP_PIECE)) {
        return 0;
    }
    if (write_all(fd, b->p, b->len) != 0) {
        return PROFD_EIO;
    }
    *len += b->len;
    b->len = 0;
    return 0;
}

/* The whole state: head, ranks, the nodes known (coordinator), the
 * unfinished windows and the most recent finished ones (none on a
 * coordinator), with their members and incoming files; into b, or with
 * fd >= 0 written to fd as it goes (b a piece at a time; *len: the bytes
 * written). PROFD_ENOMEM, or PROFD_EIO with errno. */
static int snapshot_text(pd_journal_t *j, buf_t *b, int fd, size_t *len)
{
    size_t nfin = 0, skip, keep = j->role.coordinator ? 0 : KEEP_FINISHED;
    const char *name, *inst;
    int rv = put_head(j, b);
    *len = 0;
    for (pd_rank_t *k = pd_registry_next(j->n->reg, NULL); k && rv == 0;
         k = pd_registry_next(j->n->reg, k)) {
        if (k->node_client == 0 && (rv = put_rank(j, b, k)) == 0) {
            rv = snap_flush(b, fd, false, len);
        }
    }
    for (size_t i = 0; rv == 0 && j->role.node_at && j->role.node_at(j->role.arg, i, &name, &inst);
         i++) {
        rv = put_node(j, b, name, inst, false);
    }
    for (pd_window_t *w = j->n->win->head; w; w = w->next) {
        nfin += finished(w);
    }
    skip = nfin > keep ? nfin - keep : 0;
    for (pd_window_t *w = j->n->win->head; w && rv == 0; w = w->next) {
        if (finished(w) && skip > 0) {
            skip--;
            continue;
        }
        rv = put_window(j, b, w);
        for (size_t i = 0; !w->slim && i < w->nmembers && rv == 0; i++) {
            if ((rv = put_member(j, b, w, i)) == 0) {
                rv = snap_flush(b, fd, false, len);
            }
        }
        for (size_t i = 0; j->role.coordinator && i < w->nincoming && rv == 0; i++) {
            if ((rv = put_incoming(j, b, w, i)) == 0) {
                rv = snap_flush(b, fd, false, len);
            }
        }
        pd_windows_marks_clear(w);
    }
    return rv == 0 ? snap_flush(b, fd, true, len) : rv;
}

static void snapshot_begin(pd_journal_t *j)
{
    int64_t t0 = pd_now_us();
    buf_t piece = {0};
    snap_job_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return;
    }
    snprintf(s->part, sizeof(s->part), "%s", j->part);
    s->fd = open(s->part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    /* what is marked is in the file already (write_pending ran) */
    int rv = s->fd < 0 ? PROFD_EIO : snapshot_text(j, &piece, s->fd, &s->len);
    if ((int64_t)piece.cap > j->st.snapshot_buffer) {
        j->st.snapshot_buffer = (int64_t)piece.cap;
    }
    pu_sbuf_free(&piece);
    if (rv != 0) {
        if (rv == PROFD_EIO) {
            log_error(j, "cannot write a snapshot of");
        }
        if (s->fd >= 0) {
            close(s->fd);
            unlink(s->part);
        }
        j->snap_retry = pd_now_ms() + 10000;
        free(s);
        return;
    }
    j->st.snapshot_us = pd_now_us() - t0;
    s->j = j;
    s->work.data = s;
    if (uv_queue_work(&j->n->loop->uv, &s->work, snap_work, snap_after) != 0) {
        close(s->fd);
        unlink(s->part);
        free(s);
        return;
    }
    j->compacting = true;
    j->tail.len = 0;
}

/* An older store's file was read: the journal is written from what it
 * held (aside, synced, renamed into place) before that file is renamed
 * <legacy>.imported, so that a stop in between reads one or the other. */
static int write_imported(pd_journal_t *j, char *err, size_t errlen)
{
    buf_t text = {0};
    char old[PD_PATH_MAX + 128], done[PD_PATH_MAX + 140];
    size_t len;
    int rv = snapshot_text(j, &text, -1, &len), fd = -1;
    if (rv == 0) {
        fd = open(j->part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        rv = fd < 0 || write_all(fd, text.p, text.len) != 0 || fdatasync(fd) != 0 ||
                     rename(j->part, j->path) != 0
                 ? PROFD_EIO
                 : 0;
        if (rv != 0) {
            snprintf(err, errlen, "cannot write the journal %s: %s", j->path, strerror(errno));
            unlink(j->part);
        }
    } else {
        snprintf(err, errlen, "out of memory");
    }
    if (fd >= 0) {
        close(fd);
    }
    free(text.p);
    snprintf(old, sizeof(old), "%s/%s", j->n->save_path, j->role.legacy);
    snprintf(done, sizeof(done), "%s.imported", old);
    if (rv == 0 && rename(old, done) != 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", old, done, strerror(errno));
        rv = PROFD_EIO;
    }
    if (rv == 0) {
        PD_LOG(j->n->log, PD_LOG_INFO, "journal", "%s imported into %s, kept as %s", old, j->path,
               done);
    }
    return rv;
}

int pd_journal_open(pd_journal_t **out, pd_node_t *n, char *instance, size_t instance_len,
                    pd_journal_loaded_t *loaded, char *err, size_t errlen)
{
    return pd_journal_open_as(out, n, NULL, instance, instance_len, loaded, err, errlen);
}

int pd_journal_open_as(pd_journal_t **out, pd_node_t *n, const pd_journal_role_t *role,
                       char *instance, size_t instance_len, pd_journal_loaded_t *loaded, char *err,
                       size_t errlen)
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
    j->held_tail = &j->held;
    if (role) {
        j->role = *role;
    }
    int plen =
        j->role.file
            ? snprintf(j->path, sizeof(j->path), "%s/%s", n->save_path, j->role.file)
            : snprintf(j->path, sizeof(j->path), "%s/.profd-%s.journal", n->save_path, n->name);
    if ((size_t)plen >= sizeof(j->path)) {
        snprintf(err, errlen, "save_path too long for the journal");
        free(j);
        return PROFD_EINVAL;
    }
    snprintf(j->part, sizeof(j->part), "%s.part", j->path);
    unlink(j->part); /* a snapshot a stop interrupted */
    pd_jload_t args = {.n = n, .role = j->role, .path = j->path, .instance = instance};
    int rv = pd_jload(&args, loaded, err, errlen);
    snprintf(j->coord, sizeof(j->coord), "%s", loaded->coordinator);
    if (rv == 0 && loaded->imported) {
        rv = write_imported(j, err, errlen);
    }
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
        out->buffered = (int64_t)(j->pending.cap + j->tail.cap);
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
    release_held(j, false);
    free(j->pending.p);
    free(j->tail.p);
    free(j);
}
