// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The node link's files: streamed to the coordinator in chunks, several of
 * a file in flight (see linkpriv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "linkstream.h"
#include "profd/errors.h"

void pd_link_lost(pd_link_t *l, const char *why)
{
    if (l->registered) {
        PD_LOG(l->n->log, PD_LOG_WARN, "link", "coordinator %s: %s; reconnecting",
               l->n->cfg->coordinator_url, why);
    }
    l->registered = false;
    int64_t now = pd_now_ms();
    l->next_try_ms = now + l->backoff_ms;
    l->backoff_ms = l->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : l->backoff_ms * 2;
}

int pd_link_reply_of(int rv, const void *body, size_t len, pp_type_t want, pp_msg_t *m)
{
    if (rv != 0) {
        return rv;
    }
    char err[256];
    size_t jl;
    const void *payload;
    size_t plen;
    jl = pp_frame_split(body, len, &payload, &plen);
    rv = pp_reply_decode(body, jl, 0, m, err, sizeof(err));
    if (rv != 0) {
        return rv;
    }
    if (want != PP_T_NONE && m->type != want) {
        pp_msg_free(m);
        return PROFD_EPROTO;
    }
    return 0;
}

void pd_link_delivered(pd_link_t *l, int64_t id)
{
    pd_window_t *w = pd_windows_get(l->n->win, id);
    if (w && --w->pending == 0) {
        char dir[PD_PATH_MAX];
        w->state = PP_WS_DONE;
        w->done_ms = pd_now_ms();
        pd_windows_touch(l->n->win, w, NULL);
        snprintf(dir, sizeof(dir), "%s/%s", w->job, w->name);
        pd_confine_prune_path(l->n->spool, dir);
        PD_LOG(l->n->log, PD_LOG_INFO, "link", "window %s delivered to the coordinator", w->name);
    }
}

/* ---- streaming ---- */

/* x read whole, to go in a chunks request: its buffer counted apart. */
static void ready_add(pd_link_t *l, xfer_t *x)
{
    x->state = X_READY;
    l->nbufs--;
    l->nready++;
    l->ready_bytes += x->size;
}

static void ready_drop(pd_link_t *l, const xfer_t *x)
{
    l->nready--;
    l->ready_bytes -= x->size;
}

static void xfer_free(pd_link_t *l, xfer_t *x)
{
    for (xfer_t **pp = &l->xfers; *pp; pp = &(*pp)->next_x) {
        if (*pp == x) {
            *pp = x->next_x;
            break;
        }
    }
    if (x->fd >= 0) {
        close(x->fd);
    }
    XXH64_freeState(x->hs);
    if (x->state == X_READY) {
        ready_drop(l, x);
    } else if (x->buf) {
        l->nbufs--;
    }
    free(x->buf);
    free(x);
}

/* Nothing more of x goes out (delivered, or refused): freed once its
 * read and its chunks in flight are over. */
static void xfer_end(pd_link_t *l, xfer_t *x)
{
    x->gone = true;
    if (x->inflight == 0 && x->state != X_READING) {
        xfer_free(l, x);
    }
}

/* A chunk was not taken: once none is out, the file goes on from what the
 * coordinator last said it holds (the hash, over bytes that do not change,
 * stays; a coordinator ahead of it is caught up by reading). */
static void xfer_settle(pd_link_t *l, xfer_t *x)
{
    if (x->rewind && x->inflight == 0 && x->state != X_READING) {
        if (x->have < x->acked) { /* it lost bytes it held (a checksum mismatch) */
            l->backlog_bytes += x->acked - x->have;
            x->acked = x->have;
        }
        x->next = x->have;
        x->tail_sent = false;
        x->rewind = false;
    }
}

static void xfer_retry(pd_link_t *l, xfer_t *x, const char *why)
{
    x->retry_ms = pd_now_ms() + l->backoff_ms;
    PD_LOG(l->n->log, PD_LOG_DEBUG, "link", "%s at %lld: %s; retrying", x->path, (long long)x->next,
           why);
}

static void on_chunk(void *arg, int rv, const void *body, size_t len)
{
    sent_t *s = arg;
    xfer_t *x = s->x;
    pd_link_t *l = x->l;
    int64_t end = s->end;
    pp_msg_t m;
    s->used = false;
    x->inflight--;
    l->nxfers_out--;
    rv = pd_link_reply_of(rv, body, len, PP_T_NONE, &m);
    if (x->gone) {
        if (rv == 0) {
            pp_msg_free(&m);
        }
        xfer_end(l, x);
        l->pump(l);
        return;
    }
    if (rv == PROFD_ETIMEDOUT || rv == PROFD_ENODAEMON || rv == PROFD_ECLOSED ||
        rv == PROFD_ECLIENT) {
        if (rv == PROFD_ECLIENT) { /* the coordinator restarted: register first */
            pd_link_lost(l, "it does not know this node");
        }
        x->rewind = true;
        xfer_retry(l, x, profd_strerror(rv));
        xfer_settle(l, x);
        l->pump(l);
        return;
    }
    if (rv != 0 || m.type != PP_T_chunk_ack) {
        if (rv == 0) {
            pp_msg_free(&m);
        }
        /* the coordinator does not want it (unknown window, node lost):
         * nothing more can be done with this file */
        PD_LOG(l->n->log, PD_LOG_WARN, "link", "%s refused by the coordinator: %s", x->path,
               profd_strerror(rv ? rv : PROFD_EPROTO));
        l->backlog_files--;
        l->backlog_bytes -= x->size - x->acked;
        int64_t window = x->window;
        xfer_end(l, x);
        pd_link_delivered(l, window);
        l->pump(l);
        return;
    }
    int64_t have = m.u.chunk_ack.have;
    bool done = m.u.chunk_ack.done;
    int64_t queue = m.u.chunk_ack.queue;
    pp_msg_free(&m);
    l->coord_queue = queue < 0 ? 0 : queue >= PIPE_MAX ? PIPE_MAX - 1 : queue;
    if (done) {
        l->backlog_files--;
        l->backlog_bytes -= x->size - x->acked;
        pd_confine_unlink(l->n->spool, x->src);
        int64_t window = x->window;
        xfer_end(l, x);
        pd_link_delivered(l, window);
        l->pump(l);
        return;
    }
    if (have < 0 || have > x->size) {
        have = 0;
    }
    bool progress = have > x->acked;
    if (progress) {
        l->backlog_bytes -= have - x->acked;
        x->acked = have;
        x->backoff_ms = 0;
    }
    x->have = have;
    if (have < end) { /* not taken: the file goes on from `have` */
        x->rewind = true;
        if (!progress) { /* it could not write (out of space, no room): not again at once */
            x->backoff_ms =
                x->backoff_ms ? (x->backoff_ms >= 2500 ? 5000 : 2 * x->backoff_ms) : 200;
            x->retry_ms = pd_now_ms() + x->backoff_ms;
        }
    }
    xfer_settle(l, x); /* the last answer of a file that goes back */
    l->pump(l);
}

/* May x go in a chunks request: a coordinator that takes them, a whole
 * file of one chunk, nothing of it sent or held yet. */
static bool batchable(const pd_link_t *l, const xfer_t *x)
{
    return l->files && !x->alone && x->size <= l->n->cfg->chunk_bytes && x->next == 0 &&
           x->have == 0 && x->acked == 0;
}

static void on_read(uv_fs_t *req)
{
    xfer_t *x = req->data;
    pd_link_t *l = x->l;
    ssize_t n = req->result;
    uv_fs_req_cleanup(req);
    if (l == NULL) { /* orphaned by pd_link_fini() while reading */
        close(x->fd);
        XXH64_freeState(x->hs);
        free(x->buf);
        free(x);
        return;
    }
    l->nxfers_out--;
    x->state = X_IDLE;
    if (x->gone) {
        xfer_end(l, x);
        l->pump(l);
        return;
    }
    if (n < 0 || (n == 0 && x->read_at < x->size)) {
        xfer_retry(l, x, n < 0 ? uv_strerror((int)n) : "file shrank");
        l->pump(l);
        return;
    }
    if (x->read_at == x->hashed) { /* hashed as it goes out: no second pass */
        XXH64_update(x->hs, x->buf, (size_t)n);
        x->hashed += n;
    }
    if (x->read_at == 0 && n == x->size && !x->rewind && batchable(l, x)) {
        ready_add(l, x); /* the whole file: goes in the next chunks request */
        l->pump(l);
        return;
    }
    if (x->read_at < x->next || x->rewind) { /* only hashed: catching up, or going back */
        xfer_settle(l, x);
        l->pump(l);
        return;
    }
    sent_t *s = NULL;
    for (int i = 0; i < PIPE_MAX && s == NULL; i++) {
        s = x->sent[i].used ? NULL : &x->sent[i];
    }
    char sum[32];
    snprintf(sum, sizeof(sum), "xxh64:%016llx", (unsigned long long)XXH64_digest(x->hs));
    pp_msg_t m;
    pp_msg_init(&m, PP_T_chunk);
    m.u.chunk.node = (char *)l->n->name;
    m.u.chunk.window = x->remote;
    m.u.chunk.path = x->path;
    m.u.chunk.offset = x->next;
    m.u.chunk.len = n;
    m.u.chunk.size = x->size;
    /* the whole file's checksum, with its last chunk */
    m.u.chunk.checksum = x->next + n == x->size && x->hashed == x->size ? sum : NULL;
    if (s == NULL ||
        pd_reqc_send_msg(l->data, &m, x->buf, (size_t)n, CHUNK_TIMEOUT_MS, on_chunk, s) != 0) {
        xfer_retry(l, x, "cannot send");
        l->pump(l);
        return;
    }
    s->x = x;
    s->end = x->next + n;
    s->used = true;
    x->inflight++;
    l->nxfers_out++;
    x->next += n;
    x->tail_sent = x->next == x->size;
    l->pump(l); /* the next chunk is read while this one travels */
}

static void xfer_step(pd_link_t *l, xfer_t *x)
{
    if (x->buf == NULL) { /* a file begins: its buffer, no larger than the file */
        int64_t len = x->size < l->n->cfg->chunk_bytes ? x->size : l->n->cfg->chunk_bytes;
        x->len = len > 0 ? (size_t)len : 1;
        if ((x->buf = malloc(x->len)) == NULL) {
            xfer_retry(l, x, "out of memory");
            return;
        }
        l->nbufs++;
    }
    if (x->fd < 0) {
        char why[400];
        struct stat st;
        int root, rv = pd_confine_root(l->n->spool, &root, why, sizeof(why));
        if (rv == 0) {
            rv = pd_confine_open_file(root, x->src, &x->fd, &st, why, sizeof(why));
            close(root);
        }
        if (rv != 0) {
            x->fd = -1;
            PD_LOG(l->n->log, PD_LOG_WARN, "link", "cannot read %s in the spool: %s", x->src, why);
            xfer_retry(l, x, why);
            return;
        }
    }
    /* below what goes out next, the bytes are only hashed */
    x->read_at = x->hashed < x->next ? x->hashed : x->next;
    size_t want = (size_t)((x->read_at < x->next ? x->next : x->size) - x->read_at);
    if (want > x->len) {
        want = x->len;
    }
    uv_buf_t b = uv_buf_init(x->buf, (unsigned)want);
    x->req.data = x;
    if (uv_fs_read(&l->n->loop->uv, &x->req, x->fd, &b, 1, x->read_at, on_read) != 0) {
        xfer_retry(l, x, "cannot read");
        return;
    }
    x->state = X_READING;
    l->nxfers_out++;
}

void pd_link_queue_file(pd_link_t *l, pd_window_t *w, int64_t client, const pp_capture_t *c,
                        const pp_file_t *f)
{
    xfer_t *x = calloc(1, sizeof(*x));
    if (x == NULL || (x->hs = XXH64_createState()) == NULL) {
        free(x);
        return;
    }
    XXH64_reset(x->hs, 0);
    x->l = l;
    x->fd = -1;
    x->window = w->id;
    x->remote = w->remote_id;
    x->client = client;
    x->state = X_HELD;
    x->size = f->bytes;
    snprintf(x->path, sizeof(x->path), "%.250s/%.250s", c->dir, f->path);
    if ((size_t)snprintf(x->src, sizeof(x->src), "%s/%s/%s", w->job, w->name, x->path) >=
        sizeof(x->src)) {
        XXH64_freeState(x->hs);
        free(x);
        return; /* cannot happen: capture paths are short and checked */
    }
    x->next_x = l->xfers;
    l->xfers = x;
    l->backlog_files++;
    l->backlog_bytes += f->bytes;
    w->pending++;
}

/* ---- whole small files, several a request ---- */

/* A file of a chunks request the coordinator did not take now: sent again
 * from its start, on its own unless the link was lost. */
static void batch_again(pd_link_t *l, xfer_t *x, bool alone, const char *why)
{
    x->next = 0;
    x->have = 0;
    x->tail_sent = false;
    x->alone = x->alone || alone;
    xfer_retry(l, x, why);
}

static void on_chunks(void *arg, int rv, const void *body, size_t len)
{
    xbatch_t *q = arg;
    pd_link_t *l = q->l;
    pp_msg_t m;
    const pp_chunks_reply_t *a = NULL;
    q->used = false;
    l->nxfers_out--;
    rv = pd_link_reply_of(rv, body, len, PP_T_chunks_reply, &m);
    if (rv == 0) {
        a = &m.u.chunks_reply;
        if (a->codes_n != q->n || a->messages_n != q->n) {
            pp_msg_free(&m);
            a = NULL;
            rv = PROFD_EPROTO;
        }
    }
    /* a lost link: every file goes again, in a request as before */
    bool lost = rv == PROFD_ETIMEDOUT || rv == PROFD_ENODAEMON || rv == PROFD_ECLOSED ||
                rv == PROFD_ECLIENT;
    if (rv == PROFD_ECLIENT) { /* the coordinator restarted: register first */
        pd_link_lost(l, "it does not know this node");
    }
    /* busy: none taken; the same files in a request again, after busy_ms
     * to twice it (spread: every node was answered busy at about once) */
    int64_t busy = a && a->busy_ms > 0 ? a->busy_ms : 0;
    int64_t again_ms = busy ? pd_now_ms() + busy + pd_now_us() % busy : 0;
    for (size_t i = 0; i < q->n; i++) {
        xfer_t *x = q->x[i];
        int code = a ? (int)a->codes[i] : rv;
        x->inflight = 0;
        x->state = X_IDLE;
        if (x->gone) {
            xfer_end(l, x);
            continue;
        }
        if (busy) {
            batch_again(l, x, false, a->messages[i]);
            x->retry_ms = again_ms;
            continue;
        }
        if (code != 0 && !(a && (code == PROFD_ENOENT || code == PROFD_EINVAL))) {
            batch_again(l, x, !lost, a ? a->messages[i] : profd_strerror(code));
            continue;
        }
        if (code != 0) { /* refused, as a single chunk's error reply */
            PD_LOG(l->n->log, PD_LOG_WARN, "link", "%s refused by the coordinator: %s", x->path,
                   a->messages[i]);
        } else { /* the coordinator's journal holds it */
            pd_confine_unlink(l->n->spool, x->src);
        }
        l->backlog_files--;
        l->backlog_bytes -= x->size - x->acked;
        int64_t window = x->window;
        xfer_end(l, x);
        pd_link_delivered(l, window);
    }
    if (a) {
        pp_msg_free(&m);
    }
    l->pump(l);
}

/* One chunks request of the files read whole (X_READY), once no other
 * such file is being read (the pump reads ahead while FILES_BATCH files
 * and chunk_bytes allow) or a request's worth is ready: up to FILES_BATCH
 * files, their bytes within chunk_bytes and their JSON (an item's
 * numbers, names and checksum in under 160 bytes beside its path) within
 * limits.max_msg_bytes, one file at least. */
static void batch_pump(pd_link_t *l)
{
    size_t ready = 0, bytes = 0, json = 64 + strlen(l->n->name);
    bool reading = false;
    xbatch_t *q = NULL;
    for (xfer_t *x = l->xfers; x && !reading; x = x->next_x) {
        reading = x->state == X_READING && batchable(l, x);
    }
    ready = (size_t)l->nready;
    for (int i = 0; i < MAX_XFERS && q == NULL; i++) {
        q = l->xbatches[i].used ? NULL : &l->xbatches[i];
    }
    if (ready == 0 || (reading && ready < FILES_BATCH) || l->nxfers_out >= MAX_XFERS || q == NULL ||
        !l->registered) {
        return;
    }
    pp_chunk_item_t items[FILES_BATCH];
    char sums[FILES_BATCH][32];
    q->l = l;
    q->n = 0;
    for (xfer_t *x = l->xfers; x && q->n < FILES_BATCH; x = x->next_x) {
        size_t item = 160 + strlen(x->path);
        if (x->state != X_READY ||
            (q->n > 0 && (bytes + (size_t)x->size > (size_t)l->n->cfg->chunk_bytes ||
                          json + item > (size_t)l->n->cfg->max_msg_bytes))) {
            continue;
        }
        json += item;
        snprintf(sums[q->n], sizeof(sums[q->n]), "xxh64:%016llx",
                 (unsigned long long)XXH64_digest(x->hs));
        items[q->n] = (pp_chunk_item_t){.window = x->remote,
                                        .path = x->path,
                                        .len = x->size,
                                        .size = x->size,
                                        .checksum = sums[q->n]};
        q->x[q->n++] = x;
        bytes += (size_t)x->size;
    }
    char *payload = malloc(bytes + 1);
    size_t off = 0;
    pp_msg_t m;
    pp_msg_init(&m, PP_T_chunks);
    m.u.chunks.node = (char *)l->n->name;
    m.u.chunks.items = items;
    m.u.chunks.items_n = q->n;
    for (size_t i = 0; payload && i < q->n; i++) {
        memcpy(payload + off, q->x[i]->buf, (size_t)q->x[i]->size);
        off += (size_t)q->x[i]->size;
    }
    int rv = payload == NULL ? PROFD_ENOMEM
                             : pd_reqc_send_msg(l->data, &m, bytes ? payload : NULL, bytes,
                                                CHUNK_TIMEOUT_MS, on_chunks, q);
    free(payload);
    for (size_t i = 0; i < q->n; i++) {
        xfer_t *x = q->x[i];
        if (rv != 0) {
            ready_drop(l, x);
            x->state = X_IDLE;
            free(x->buf);
            x->buf = NULL;
            batch_again(l, x, true, "cannot send");
            continue;
        }
        x->state = X_BATCHED;
        x->inflight = 1;
        x->next = x->size;
        x->tail_sent = true;
        ready_drop(l, x);
        free(x->buf); /* read again should it go again */
        x->buf = NULL;
    }
    if (rv == 0) {
        q->used = true;
        l->nxfers_out++;
    }
}

void pd_link_stream_pump(pd_link_t *l, int64_t now)
{
    /* up to 1 + the coordinator's queue chunks of a file in flight, its
     * next one read while they travel: a continuous stream */
    int depth = 1 + (int)l->coord_queue;
    for (xfer_t *x = l->xfers; x && l->nxfers_out < MAX_XFERS; x = x->next_x) {
        if (x->state == X_IDLE && now >= x->retry_ms && !x->gone && !x->rewind && !x->tail_sent &&
            x->inflight < depth && (x->buf || l->nbufs < MAX_XFERS) &&
            (!batchable(l, x) ||
             (l->nready < FILES_BATCH && l->ready_bytes + x->size <= l->n->cfg->chunk_bytes))) {
            xfer_step(l, x);
        }
    }
    batch_pump(l);
}

void pd_link_stream_fini(pd_link_t *l)
{
    while (l->xfers) {
        xfer_t *x = l->xfers;
        l->xfers = x->next_x;
        if (x->state == X_READING) {
            x->l = NULL; /* on_read() frees it */
            uv_cancel((uv_req_t *)&x->req);
            continue;
        }
        if (x->fd >= 0) {
            close(x->fd);
        }
        XXH64_freeState(x->hs);
        free(x->buf);
        free(x);
    }
}
