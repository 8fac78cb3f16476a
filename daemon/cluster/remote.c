// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Coordinator side of remote captures (see remote.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY /* the size of XXH64_state_t */
#include <xxhash.h>

#include "confine.h"
#include "gather.h"
#include "pu_buf.h"
#include "remote.h"
#include "wcaps.h"

/* ---- plans ---- */

static void fill_entry(pp_plan_entry_t *e, const pd_window_t *w, int sel)
{
    e->window = w->id;
    e->name = (char *)w->name;
    e->job = (char *)w->job;
    e->first_step = w->first;
    e->last_step = w->last;
    e->tool = (char *)pd_plan_tool(&w->spec, sel);
    e->mode = pd_plan_mode(&w->spec, sel);
    e->settings = (char *)pd_plan_settings(&w->spec, sel);
    e->schedule = *pd_plan_schedule(&w->spec, sel);
    if (sel >= 0) {
        e->phases = w->spec.selectors[sel].phases;
        e->phases_n = w->spec.selectors[sel].phases_n;
    }
}

/* Does entry e (of the member's selector) carry the member's roles and
 * folder tag? */
static bool same_entry(const pp_plan_entry_t *e, const pd_member_t *m)
{
    if (e->pid_dir != m->pid_dir || e->roles_n != m->nselnames) {
        return false;
    }
    for (size_t i = 0; i < e->roles_n; i++) {
        if (strcmp(e->roles[i], m->selnames[i]) != 0) {
            return false;
        }
    }
    return true;
}

int pd_remote_node_plan(const pd_node_t *n, const char *node, pp_node_plan_t *out)
{
    size_t cap = 0;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        cap += pd_windows_running(w) ? w->spec.selectors_n + 1 : 0;
    }
    out->entries = cap ? calloc(cap, sizeof(*out->entries)) : NULL;
    out->entries_n = 0;
    if (cap && out->entries == NULL) {
        return PROFD_ENOMEM;
    }
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        if (!pd_windows_running(w)) {
            continue;
        }
        /* one entry per selector used by this node's expected members, and
         * per role set and folder tag within it (a process hosting several
         * roles may have some of them selected; pid_dir: see
         * pd_windows_add_member) */
        for (int sel = -1; sel < (int)w->spec.selectors_n; sel++) {
            size_t first = out->entries_n;
            for (size_t i = 0; i < w->nmembers; i++) {
                const pd_member_t *m = &w->members[i];
                if (m->selector != sel || m->state != PP_MS_EXPECTED || !m->node_client ||
                    m->rebind_until_ms || strcmp(m->node, node) != 0) {
                    continue;
                }
                pp_node_entry_t *ne = NULL;
                for (size_t j = first; j < out->entries_n && ne == NULL; j++) {
                    if (same_entry(&out->entries[j].entry, m)) {
                        ne = &out->entries[j];
                    }
                }
                if (ne == NULL) {
                    if (PU_GROW(out->entries, cap, out->entries_n + 1) != 0) {
                        pd_remote_node_plan_free(out);
                        return PROFD_ENOMEM;
                    }
                    ne = &out->entries[out->entries_n++];
                    pp_record_init(&pp_desc_node_entry, ne);
                    fill_entry(&ne->entry, w, sel);
                    ne->entry.roles = m->selnames; /* borrowed */
                    ne->entry.roles_n = m->nselnames;
                    ne->entry.pid_dir = m->pid_dir;
                }
                int64_t *v = realloc(ne->clients, (ne->clients_n + 1) * sizeof(*v));
                if (v == NULL) {
                    pd_remote_node_plan_free(out);
                    return PROFD_ENOMEM;
                }
                ne->clients = v;
                ne->clients[ne->clients_n++] = m->node_client;
            }
        }
    }
    return 0;
}

void pd_remote_node_plan_free(pp_node_plan_t *p)
{
    for (size_t i = 0; i < p->entries_n; i++) {
        free(p->entries[i].clients);
    }
    free(p->entries);
    p->entries = NULL;
    p->entries_n = 0;
}

/* ---- results ---- */

/* A file path inside a capture: relative, no empty, "." or ".." parts, and
 * only the characters trace files use. */
static bool file_path_ok(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n > 255 || p[0] == '/' || p[n - 1] == '/') {
        return false;
    }
    for (const char *c = p; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.' || *c == '/';
        if (!ok || (c[0] == '/' && c[1] == '/')) {
            return false;
        }
    }
    for (const char *seg = p; seg; seg = strchr(seg, '/') ? strchr(seg, '/') + 1 : NULL) {
        if (strncmp(seg, "./", 2) == 0 || strcmp(seg, ".") == 0 || strncmp(seg, "../", 3) == 0 ||
            strcmp(seg, "..") == 0) {
            return false;
        }
    }
    return true;
}

static int add_incoming(pd_window_t *w, size_t member, size_t ci, size_t fi, const pp_capture_t *c,
                        const pp_file_t *f)
{
    char path[PD_INCOMING_PATH_MAX + 1];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->dir, f->path) >= sizeof(path)) {
        return PROFD_EINVAL;
    }
    pd_incoming_t *in = pd_windows_add_incoming(w, path);
    if (in == NULL) {
        return PROFD_ENOMEM;
    }
    in->member = member;
    in->cap = ci;
    in->file = fi;
    in->size = f->bytes;
    snprintf(in->checksum, sizeof(in->checksum), "%s", f->checksum ? f->checksum : "");
    w->pending++;
    return 0;
}

int pd_remote_on_result(pd_node_t *n, const pd_rank_t *k, bool shared, pp_node_result_t *r,
                        char *err, size_t errlen)
{
    char why[256], path[PD_PATH_MAX + 300];
    pd_window_t *w;
    pd_member_t *m;
    int rv = pd_windows_report(n->win, k, r->window, &r->captures, &r->captures_n, true, &w, &m,
                               err, errlen);
    if (rv != 0) {
        return rv;
    }
    for (size_t i = 0; i < m->ncaps; i++) {
        pp_capture_t *c = &m->caps[i];
        bool ok = true;
        for (size_t f = 0; c->dir && ok && f < c->files_n; f++) {
            ok = file_path_ok(c->files[f].path) && c->files[f].bytes >= 0;
        }
        if (!ok) {
            snprintf(why, sizeof(why), "files of '%.128s' are not where this capture belongs",
                     c->dir);
            PD_LOG(n->log, PD_LOG_WARN, "remote", "window %s rank %lld on %s: %s", w->name,
                   (long long)m->rank, m->node, why);
            pd_windows_set_status(c, PP_CAP_FAILED, why);
            free(c->dir);
            c->dir = NULL;
        }
        for (size_t f = 0; c->dir && f < c->files_n; f++) {
            if (shared) { /* written by the node into the same tree */
                struct stat st;
                char root[PD_PATH_MAX], whyc[128];
                int rfd = -1, fd = -1;
                snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
                snprintf(path, sizeof(path), "%s/%s/%s/%s", w->job, w->name, c->dir,
                         c->files[f].path);
                /* below the tree, never through a symlink */
                bool there = pd_confine_root(root, &rfd, whyc, sizeof(whyc)) == 0 &&
                             pd_confine_open_file(rfd, path, &fd, &st, whyc, sizeof(whyc)) == 0;
                if (fd >= 0) {
                    close(fd);
                }
                if (rfd >= 0) {
                    close(rfd);
                }
                if (!there || st.st_size != c->files[f].bytes) {
                    snprintf(why, sizeof(why), "%.128s/%.64s is not in the shared save_path",
                             c->dir, c->files[f].path);
                    pd_windows_set_status(c, PP_CAP_FAILED, why);
                    break;
                }
            } else if (add_incoming(w, (size_t)(m - w->members), i, f, c, &c->files[f]) != 0) {
                pd_windows_set_status(c, PP_CAP_FAILED, "cannot track the capture's files");
                break;
            }
        }
    }
    /* no new plan generation: see pd_windows_on_result() */
    pd_windows_maybe_finish(n->win, w);
    return 0;
}

/* ---- files ---- */

/* A file's last ack: the node forgets the file once it has it, so it
 * waits until the journal holds the file as done. `queue`: how many
 * chunks of a file beyond the one being written the coordinator takes
 * (a node keeps that many more in flight; older coordinators send none, and
 * their nodes one chunk at a time). */
static void reply_ack(pd_node_t *n, pd_req_t *req, int64_t have, bool done)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_chunk_ack);
    m.u.chunk_ack.have = have;
    m.u.chunk_ack.done = done;
    m.u.chunk_ack.queue = PD_REMOTE_QUEUE;
    if (done) {
        pd_node_reply_durable(n, req, &m);
    } else {
        pd_req_reply_msg(req, &m);
    }
}

/* A chunk that arrived while the one before it was being written: held,
 * its request parked, until that write is over. */
typedef struct qchunk {
    pd_req_t *req;
    char *data; /* owned */
    size_t len;
    int64_t offset;
    char checksum[32];
    struct qchunk *next;
} qchunk_t;

typedef struct chunk_ctx {
    pd_node_t *n;
    pd_req_t *req;
    int64_t window;
    size_t in;
    /* the file's running hash, the job's own copy (the incoming files of a
     * window may move while it runs) */
    XXH64_state_t hs;
    int64_t hashed;
    /* the chunks of the file held behind this one, by offset (up to
     * PD_REMOTE_QUEUE); `end`: where this one ends */
    qchunk_t *queue;
    int nqueued;
    int64_t end;
} chunk_ctx_t;

/* The running hash of an incoming file (in->hash, freed with the window),
 * and the job writing its next bytes (NULL none: in->busy says the same). */
typedef struct rx_state {
    XXH64_state_t hs; /* first: the window frees in->hash as it is */
    struct chunk_ctx *run;
} rx_state_t;

static void incoming_finished(pd_node_t *n, pd_window_t *w, pd_incoming_t *in,
                              pp_capture_status_t status, const char *failure)
{
    in->done = true;
    in->busy = false;
    pd_incoming_mark(w, in);
    free(in->hash); /* its running hash is over */
    in->hash = NULL;
    if (failure) {
        pd_member_t *m = in->member < w->nmembers ? &w->members[in->member] : NULL;
        if (m && in->cap < m->ncaps) {
            pd_windows_set_status(&m->caps[in->cap], status, failure);
            pd_windows_touch(n->win, w, m);
        }
    }
    w->pending--;
    pd_windows_dirty(n->win);
    pd_windows_maybe_finish(n->win, w);
}

/* Answer every chunk held behind a write: the file holds `have` bytes
 * (the node sends what follows again). When stopping, the endpoint already
 * freed their requests. */
static void queue_flush(pd_node_t *n, chunk_ctx_t *cc, int64_t have, bool done)
{
    while (cc->queue) {
        qchunk_t *q = cc->queue;
        cc->queue = q->next;
        if (!n->stopping) {
            if (have >= 0) {
                reply_ack(n, q->req, have, done);
            } else {
                pd_req_reply_error(q->req, PROFD_ENOENT, "the window is gone");
            }
        }
        free(q->data);
        free(q);
    }
    cc->nqueued = 0;
}

static int chunk_submit(pd_node_t *n, pd_req_t *req, pd_window_t *w, pd_incoming_t *in, size_t idx,
                        int64_t offset, char *data, size_t len, const char *checksum,
                        chunk_ctx_t *from);

static void chunk_done(pd_job_t *job)
{
    pd_chunk_job_t *j = (pd_chunk_job_t *)job;
    chunk_ctx_t *cc = j->arg;
    pd_node_t *n = cc->n;
    pd_window_t *w = pd_windows_get(n->win, cc->window);
    pd_incoming_t *in = w && cc->in < w->nincoming ? &w->incoming[cc->in] : NULL;
    bool given_up = false;
    if (in && !in->done) {
        in->busy = false;
        ((rx_state_t *)in->hash)->run = NULL;
        in->have = j->have;
        memcpy(in->hash, &cc->hs, sizeof(cc->hs)); /* allocated with the chunk's job */
        in->hashed = cc->hashed;
        if (j->complete && j->got[0]) { /* the manifest's checksum: of the bytes received */
            pd_member_t *m = in->member < w->nmembers ? &w->members[in->member] : NULL;
            snprintf(in->checksum, sizeof(in->checksum), "%s", j->got);
            pd_incoming_mark(w, in);
            if (m && in->cap < m->ncaps && in->file < m->caps[in->cap].files_n) {
                /* journalled with the incoming file (pd_jrec_incoming_restore
                 * puts it back): writing the member again for every file
                 * cost O(files) each, O(files^2) a capture */
                pp_file_t *f = &m->caps[in->cap].files[in->file];
                free(f->checksum);
                f->checksum = strdup(j->got);
            }
        }
        if (j->rv != 0 && !in->warned) { /* once a streak: a full disk fails every try */
            PD_LOG(n->log, PD_LOG_WARN, "remote", "window %s: %s", w->name, j->reason);
        }
        in->warned = j->rv != 0;
        if (j->complete) {
            w->bytes += in->size;
            incoming_finished(n, w, in, PP_CAP_NONE, NULL);
        } else if (j->rv == PROFD_ELIMIT || j->rv == PROFD_EPATH) {
            /* no point in sending it again: the node may drop it */
            given_up = true;
            incoming_finished(n, w, in, j->rv == PROFD_ELIMIT ? PP_CAP_TRUNCATED : PP_CAP_FAILED,
                              j->reason);
        } else if (j->mismatch && ++in->mismatches >= PD_REMOTE_MAX_MISMATCHES) {
            /* the node's file is not what it listed: sent again, it would fail again */
            char why[800];
            snprintf(why, sizeof(why), "%.300s: %.400s (%d transfers)", in->path, j->reason,
                     in->mismatches);
            PD_LOG(n->log, PD_LOG_WARN, "remote", "window %s: giving up on %s", w->name, why);
            given_up = true;
            incoming_finished(n, w, in, PP_CAP_FAILED, why);
        }
    }
    /* when stopping, the endpoint already freed its parked requests */
    if (!n->stopping) {
        if (in) {
            reply_ack(n, cc->req, given_up ? in->size : j->have, j->complete || given_up);
        } else {
            pd_req_reply_error(cc->req, PROFD_ENOENT, "the window is gone");
        }
    }
    /* the next chunk held, when this one's bytes are in: written next, the
     * rest held behind it; otherwise all of them answered with what the
     * file holds (the node sends from there again) */
    qchunk_t *q = cc->queue;
    if (q && in && !in->done && !n->stopping && j->rv == 0 && q->offset == in->have) {
        cc->queue = q->next;
        cc->nqueued--;
        if (chunk_submit(n, q->req, w, in, cc->in, q->offset, q->data, q->len, q->checksum, cc) ==
            0) {
            cc->queue = NULL; /* moved to the next job */
        }
        free(q);
    }
    queue_flush(n, cc, in == NULL ? -1 : in->done ? in->size : in->have, in && in->done);
    free(cc);
    pd_job_free(job);
}

/* Write `data` (owned) at `offset` of the incoming file `in` on the pool;
 * the job's end answers req. `from`: the job before it, whose held chunks
 * this one takes over. 0, or the error req was answered with. */
static int chunk_submit(pd_node_t *n, pd_req_t *req, pd_window_t *w, pd_incoming_t *in, size_t idx,
                        int64_t offset, char *data, size_t len, const char *checksum,
                        chunk_ctx_t *from)
{
    pd_chunk_job_t *j = (pd_chunk_job_t *)pd_job_new(PD_JOB_CHUNK);
    chunk_ctx_t *cc = calloc(1, sizeof(*cc));
    int rv = PROFD_ENOMEM;
    const char *why = "out of memory";
    if (j == NULL || cc == NULL) {
        goto fail;
    }
    if (in->hash == NULL) {
        if ((in->hash = calloc(1, sizeof(rx_state_t))) == NULL) {
            goto fail;
        }
        XXH64_reset(in->hash, 0);
        in->hashed = 0;
    }
    j->data = data;
    data = NULL;
    j->len = len;
    j->offset = offset;
    j->size = in->size;
    /* the sender's checksum of the whole file: with its last chunk (a node
     * hashes while it streams), or listed in its result (older nodes) */
    snprintf(j->expect, sizeof(j->expect), "%s", checksum && checksum[0] ? checksum : in->checksum);
    memcpy(&cc->hs, in->hash, sizeof(cc->hs));
    cc->hashed = in->hashed;
    j->hash = &cc->hs;
    j->hashed = &cc->hashed;
    snprintf(j->root, sizeof(j->root), "%.*s", (int)w->root_len, w->dir);
    j->min_free = n->cfg->min_free_bytes;
    if ((size_t)snprintf(j->dst, sizeof(j->dst), "%s/%s/%s", w->job, w->name, in->path) >=
        sizeof(j->dst)) {
        rv = PROFD_EINVAL;
        why = "path too long";
        goto fail;
    }
    cc->n = n;
    cc->req = req;
    cc->window = w->id;
    cc->in = idx;
    cc->end = offset + (int64_t)len;
    if (from && from->queue) {
        cc->queue = from->queue;
        cc->nqueued = from->nqueued;
    }
    j->window = w->id;
    j->done = chunk_done;
    j->arg = cc;
    in->busy = true;
    ((rx_state_t *)in->hash)->run = cc;
    if (pd_job_submit(&n->loop->uv, PD_JOB(j)) != 0) {
        in->busy = false;
        ((rx_state_t *)in->hash)->run = NULL;
        if (from) {
            from->queue = cc->queue; /* answered by the caller */
            from->nqueued = cc->nqueued;
        }
        rv = PROFD_EINTERNAL;
        why = "cannot queue the write";
        goto fail;
    }
    return 0;
fail:
    free(data);
    free(cc);
    if (j) {
        pd_job_free(PD_JOB(j)); /* frees j->data */
    }
    pd_req_reply_error(req, rv, "%s", why);
    return rv;
}

/* A file of a done window whose files' list is gone (every file
 * arrived): a resend after the reply was lost, acknowledged as arrived
 * when its captures (read back from its manifest when it is compacted)
 * list the file as one of that node's members', else refused as an
 * unexpected file. Its size (0), or the code with its reason in err. */
static int done_file(pd_window_t *w, const char *node, const char *file, int64_t *sizep, char *err,
                     size_t errlen)
{
    char path[PD_INCOMING_PATH_MAX + 1];
    bool back;
    int64_t size = -1;
    if (pd_wcaps_open(w, &back, err, errlen) != 0) {
        return PROFD_EIO;
    }
    for (size_t i = 0; i < w->nmembers && size < 0; i++) {
        const pd_member_t *m = &w->members[i];
        for (size_t k = 0; strcmp(m->node, node) == 0 && k < m->ncaps && size < 0; k++) {
            const pp_capture_t *cp = &m->caps[k];
            for (size_t f = 0; cp->dir && f < cp->files_n && size < 0; f++) {
                if ((size_t)snprintf(path, sizeof(path), "%s/%s", cp->dir, cp->files[f].path) <
                        sizeof(path) &&
                    strcmp(path, file) == 0) {
                    size = cp->files[f].bytes;
                }
            }
        }
    }
    pd_wcaps_done(w, back);
    if (size < 0) {
        snprintf(err, errlen, "window %s expects no file %.200s from %s", w->name, file, node);
        return PROFD_ENOENT;
    }
    *sizep = size;
    return 0;
}

void pd_remote_on_chunk(pd_node_t *n, pd_req_t *req, const pp_chunk_t *c, const void *payload,
                        size_t plen)
{
    pd_window_t *w = pd_windows_get(n->win, c->window);
    pd_incoming_t *in = NULL;
    size_t idx = 0;
    if (w == NULL) {
        pd_req_reply_error(req, PROFD_ENOENT, "no window %lld", (long long)c->window);
        return;
    }
    if (w->state == PP_WS_DONE && w->incoming == NULL) {
        /* done, its files' list dropped (every one arrived): the window's
         * captures list them, read back from its manifest when compacted */
        char err[600];
        int64_t size;
        int rv = done_file(w, c->node, c->path, &size, err, sizeof(err));
        if (rv != 0) {
            pd_req_reply_error(req, rv, "%s", err);
        } else {
            reply_ack(n, req, size, true);
        }
        return;
    }
    in = pd_windows_incoming(w, c->path, &idx);
    pd_member_t *m = in && in->member < w->nmembers ? &w->members[in->member] : NULL;
    if (in == NULL || m == NULL || strcmp(m->node, c->node) != 0) {
        pd_req_reply_error(req, PROFD_ENOENT, "window %s expects no file %.200s from %s", w->name,
                           c->path, c->node);
        return;
    }
    if (in->done) { /* a resend after the reply was lost */
        reply_ack(n, req, in->size, true);
        return;
    }
    if (c->size != in->size || c->len != (int64_t)plen || c->offset < 0 ||
        c->offset + c->len > c->size || (c->len == 0 && c->size != 0)) {
        pd_req_reply_error(req, PROFD_EINVAL, "chunk of %.200s does not fit the file", c->path);
        return;
    }
    /* written in order, so that the .part only ever holds the file's
     * first bytes (a restart resumes from its size) and the hash runs over
     * them as they are written: a chunk goes to the pool when the file
     * holds the bytes before it; while one is written, chunks after it wait
     * in memory (up to PD_REMOTE_QUEUE of them), each written once the
     * bytes before it are, the others answered when that stops; any other
     * chunk is answered with what the file holds, and the node resumes
     * there */
    chunk_ctx_t *run = in->busy && in->hash ? ((rx_state_t *)in->hash)->run : NULL;
    qchunk_t **at = NULL;
    if (run && c->offset >= run->end && run->nqueued < PD_REMOTE_QUEUE) {
        /* after the chunk being written: held in order of offset (chunks
         * sent one after another may arrive out of order) */
        for (at = &run->queue; *at && (*at)->offset < c->offset; at = &(*at)->next) {
        }
        if (*at && (*at)->offset == c->offset) {
            at = NULL; /* sent again: held already */
        }
    }
    if (in->busy ? at == NULL : c->offset != in->have) {
        reply_ack(n, req, in->have, false); /* resume from here */
        return;
    }
    /* held while its write runs; parked before the write is queued, since
     * the write's completion answers it */
    if (!pd_req_park(req)) {
        /* coordinator.max_node_requests held already (up to 16 chunks of
         * each node): no progress, and the node sends it again after a
         * pause (link.c: 200 ms, doubling up to 5 s) */
        PD_LOG(n->log, PD_LOG_DEBUG, "remote",
               "request pool full (coordinator.max_node_requests %lld): %s sends %.200s again "
               "later",
               (long long)n->cfg->max_node_requests, c->node, c->path);
        n->stats.chunks_deferred++;
        reply_ack(n, req, in->have, false);
        return;
    }
    char *data = plen ? malloc(plen) : NULL;
    if (plen && data == NULL) {
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return;
    }
    if (plen) {
        memcpy(data, payload, plen);
    }
    if (run) {
        qchunk_t *q = calloc(1, sizeof(*q));
        if (q == NULL) {
            free(data);
            pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
            return;
        }
        q->req = req;
        q->data = data;
        q->len = plen;
        q->offset = c->offset;
        snprintf(q->checksum, sizeof(q->checksum), "%s", c->checksum ? c->checksum : "");
        q->next = *at;
        *at = q;
        run->nqueued++;
        return;
    }
    chunk_submit(n, req, w, in, idx, c->offset, data, plen, c->checksum, NULL);
}

/* ---- whole small files in one request (chunks) ---- */

/* A batch being written: its request, parked, answered once the job is
 * over; each item's slot in the job (-1: answered already, its code in
 * the reply) and the incoming file it writes. */
typedef struct batch_ctx {
    pd_node_t *n;
    pd_req_t *req;
    pp_msg_t reply; /* chunks_reply: a code and a message per item */
    size_t nitems;
    int64_t files, bytes; /* counted in n->batch_files, n->batch_bytes while written */
    struct batch_item {
        int64_t window;
        size_t in;
        ssize_t job;
    } * item;
} batch_ctx_t;

static void batch_free(batch_ctx_t *bc)
{
    pp_msg_free(&bc->reply);
    free(bc->item);
    free(bc);
}

/* Item i's outcome: 0 with "" or a code with its reason. */
static void batch_set(batch_ctx_t *bc, size_t i, int code, const char *why)
{
    pp_chunks_reply_t *a = &bc->reply.u.chunks_reply;
    a->codes[i] = code;
    free(a->messages[i]);
    a->messages[i] = strdup(code != 0 && why ? why : "");
}

static void batch_reply(pd_node_t *n, batch_ctx_t *bc)
{
    pp_chunks_reply_t *a = &bc->reply.u.chunks_reply;
    for (size_t i = 0; i < a->messages_n; i++) {
        if (a->messages[i] == NULL) {
            pd_req_reply_error(bc->req, PROFD_ENOMEM, "out of memory");
            return;
        }
    }
    /* the node forgets each file acknowledged: only once the journal holds it */
    pd_node_reply_durable(n, bc->req, &bc->reply);
}

static void chunks_done(pd_job_t *job)
{
    pd_chunks_job_t *b = (pd_chunks_job_t *)job;
    batch_ctx_t *bc = b->arg;
    pd_node_t *n = bc->n;
    n->batch_files -= bc->files;
    n->batch_bytes -= bc->bytes;
    for (size_t i = 0; i < bc->nitems; i++) {
        if (bc->item[i].job < 0) {
            continue;
        }
        pd_chunk_job_t *j = b->items[bc->item[i].job];
        pd_window_t *w = pd_windows_get(n->win, bc->item[i].window);
        pd_incoming_t *in =
            w && bc->item[i].in < w->nincoming ? &w->incoming[bc->item[i].in] : NULL;
        if (in == NULL) {
            batch_set(bc, i, PROFD_ENOENT, "the window is gone");
            continue;
        }
        if (in->done) { /* its node was lost meanwhile: settled */
            batch_set(bc, i, 0, NULL);
            continue;
        }
        in->busy = false;
        in->have = j->have;
        if (j->rv != 0 && !in->warned) {
            PD_LOG(n->log, PD_LOG_WARN, "remote", "window %s: %s", w->name, j->reason);
        }
        in->warned = j->rv != 0;
        if (j->complete) {
            pd_member_t *m = in->member < w->nmembers ? &w->members[in->member] : NULL;
            snprintf(in->checksum, sizeof(in->checksum), "%s", j->got);
            if (m && in->cap < m->ncaps && in->file < m->caps[in->cap].files_n) {
                pp_file_t *f = &m->caps[in->cap].files[in->file]; /* as chunk_done() */
                free(f->checksum);
                f->checksum = strdup(j->got);
            }
            w->bytes += in->size;
            incoming_finished(n, w, in, PP_CAP_NONE, NULL);
            batch_set(bc, i, 0, NULL);
        } else if (j->rv == PROFD_ELIMIT || j->rv == PROFD_EPATH ||
                   (j->mismatch && ++in->mismatches >= PD_REMOTE_MAX_MISMATCHES)) {
            /* given up, as chunk_done() does: the node forgets the file */
            incoming_finished(n, w, in, j->rv == PROFD_ELIMIT ? PP_CAP_TRUNCATED : PP_CAP_FAILED,
                              j->reason);
            batch_set(bc, i, 0, NULL);
        } else {
            batch_set(bc, i, j->rv ? j->rv : PROFD_EIO, j->reason);
        }
    }
    if (!n->stopping) { /* when stopping, the endpoint freed the parked request */
        batch_reply(n, bc);
    }
    batch_free(bc);
    pd_job_free(job);
}

/* Item it of a batch, its bytes at `data`: 0 when it is to be written
 * (*inp its incoming file), 1 when it is settled already (a resend after
 * the reply was lost), else the code with its reason in err. */
static int batch_check(pd_node_t *n, const char *node, const pp_chunk_item_t *it, pd_window_t **wp,
                       pd_incoming_t **inp, size_t *idx, char *err, size_t errlen)
{
    pd_window_t *w = pd_windows_get(n->win, it->window);
    int64_t size;
    if (w == NULL) {
        snprintf(err, errlen, "no window %lld", (long long)it->window);
        return PROFD_ENOENT;
    }
    if (w->state == PP_WS_DONE && w->incoming == NULL) {
        int rv = done_file(w, node, it->path, &size, err, errlen);
        return rv != 0 ? rv : 1;
    }
    pd_incoming_t *in = pd_windows_incoming(w, it->path, idx);
    pd_member_t *m = in && in->member < w->nmembers ? &w->members[in->member] : NULL;
    if (in == NULL || m == NULL || strcmp(m->node, node) != 0) {
        snprintf(err, errlen, "window %s expects no file %.200s from %s", w->name, it->path, node);
        return PROFD_ENOENT;
    }
    if (in->done) {
        return 1;
    }
    if (it->size != in->size || it->len != it->size) {
        snprintf(err, errlen, "%.200s is not the whole file of %lld bytes", it->path,
                 (long long)in->size);
        return PROFD_EINVAL;
    }
    if (in->busy) { /* a chunk of it is being written: the node sends it on its own */
        snprintf(err, errlen, "%.200s is being written", it->path);
        return PROFD_ESTATE;
    }
    *wp = w;
    *inp = in;
    return 0;
}

bool pd_remote_batch_admit(int64_t held_files, int64_t held_bytes, int64_t files, int64_t bytes)
{
    return held_files <= 0 || (held_files + files <= PD_REMOTE_BATCH_FILES &&
                               held_bytes + bytes <= PD_REMOTE_BATCH_BYTES);
}

/* None of the batch's n items taken now: each PROFD_ELIMIT, sent again
 * after busy_ms. Nothing is acknowledged: no journal wait. */
static void batch_busy(pd_node_t *n, pd_req_t *req, size_t items)
{
    pp_msg_t m;
    char why[160];
    int64_t *codes = calloc(items + 1, sizeof(*codes));
    char **messages = calloc(items + 1, sizeof(*messages));
    if (codes == NULL || messages == NULL) {
        free(codes);
        free(messages);
        pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
        return;
    }
    snprintf(why, sizeof(why),
             "the coordinator is writing %lld batched files (%lld bytes): sent again in %d ms",
             (long long)n->batch_files, (long long)n->batch_bytes, PD_REMOTE_BUSY_MS);
    for (size_t i = 0; i < items; i++) {
        codes[i] = PROFD_ELIMIT;
        messages[i] = why;
    }
    pp_msg_init(&m, PP_T_chunks_reply);
    m.u.chunks_reply.codes = codes;
    m.u.chunks_reply.codes_n = items;
    m.u.chunks_reply.messages = messages;
    m.u.chunks_reply.messages_n = items;
    m.u.chunks_reply.busy_ms = PD_REMOTE_BUSY_MS;
    pd_req_reply_msg(req, &m);
    free(codes);
    free(messages);
    n->stats.batches_busy++;
}

void pd_remote_on_chunks(pd_node_t *n, pd_req_t *req, const pp_chunks_t *b, const void *payload,
                         size_t plen)
{
    char err[600];
    int64_t total = 0;
    for (size_t i = 0; i < b->items_n; i++) {
        total += b->items[i].len >= 0 ? b->items[i].len : 0;
    }
    if (b->items_n > PD_REMOTE_BATCH_MAX) {
        pd_req_reply_error(req, PROFD_EINVAL, "%zu files in one request: at most %d", b->items_n,
                           PD_REMOTE_BATCH_MAX);
        return;
    }
    if (total != (int64_t)plen) {
        pd_req_reply_error(req, PROFD_EINVAL, "the files' lengths add up to %lld, not %zu",
                           (long long)total, plen);
        return;
    }
    if (!pd_remote_batch_admit(n->batch_files, n->batch_bytes, (int64_t)b->items_n,
                               (int64_t)plen)) {
        batch_busy(n, req, b->items_n);
        return;
    }
    batch_ctx_t *bc = calloc(1, sizeof(*bc));
    pd_chunks_job_t *job = (pd_chunks_job_t *)pd_job_new(PD_JOB_CHUNKS);
    pp_chunks_reply_t *a = bc ? &bc->reply.u.chunks_reply : NULL;
    if (bc) {
        pp_msg_init(&bc->reply, PP_T_chunks_reply);
        bc->n = n;
        bc->req = req;
        bc->nitems = b->items_n;
        bc->item = calloc(b->items_n + 1, sizeof(*bc->item));
        a->codes = calloc(b->items_n + 1, sizeof(*a->codes));
        a->messages = calloc(b->items_n + 1, sizeof(*a->messages));
    }
    if (bc == NULL || job == NULL || bc->item == NULL || a->codes == NULL || a->messages == NULL ||
        (job->items = calloc(b->items_n + 1, sizeof(*job->items))) == NULL ||
        (plen && (job->data = malloc(plen)) == NULL)) {
        goto nomem;
    }
    a->codes_n = a->messages_n = b->items_n;
    if (plen) {
        memcpy(job->data, payload, plen);
    }
    size_t off = 0;
    for (size_t i = 0; i < b->items_n; i++) {
        const pp_chunk_item_t *it = &b->items[i];
        pd_window_t *w = NULL;
        pd_incoming_t *in = NULL;
        size_t idx = 0;
        char root[PD_PATH_MAX];
        bc->item[i].job = -1;
        err[0] = '\0';
        int rv = batch_check(n, b->node, it, &w, &in, &idx, err, sizeof(err));
        if (rv == 0) {
            snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
            if (job->n == 0) {
                snprintf(job->root, sizeof(job->root), "%s", root);
            } else if (strcmp(root, job->root) != 0) {
                snprintf(err, sizeof(err), "%.200s is in another save tree", it->path);
                rv = PROFD_ESTATE; /* sent on its own */
            }
        }
        if (rv == 0) {
            pd_chunk_job_t *j = (pd_chunk_job_t *)pd_job_new(PD_JOB_CHUNK);
            if (j == NULL) {
                goto nomem;
            }
            job->items[job->n] = j;
            j->data = job->data + off;
            j->len = (size_t)it->len;
            j->size = it->size;
            j->min_free = n->cfg->min_free_bytes;
            snprintf(j->expect, sizeof(j->expect), "%s",
                     it->checksum && it->checksum[0] ? it->checksum : in->checksum);
            snprintf(j->dst, sizeof(j->dst), "%s/%s/%s", w->job, w->name, in->path);
            /* a whole file: hashed as it is written, from its first byte */
            j->hash = calloc(1, sizeof(XXH64_state_t) + sizeof(int64_t));
            if (j->hash == NULL) {
                goto nomem;
            }
            XXH64_reset(j->hash, 0);
            j->hashed = (int64_t *)((XXH64_state_t *)j->hash + 1);
            bc->item[i] = (struct batch_item){w->id, idx, (ssize_t)job->n++};
            in->busy = true;
        }
        a->codes[i] = rv == 1 ? 0 : rv;
        if ((a->messages[i] = strdup(rv == 0 || rv == 1 ? "" : err)) == NULL) {
            goto nomem;
        }
        off += (size_t)(it->len >= 0 ? it->len : 0);
    }
    if (job->n == 0) { /* nothing to write: every item answered */
        pd_chunks_job_t *none = job;
        job = NULL;
        pd_job_free(PD_JOB(none));
        batch_reply(n, bc);
        batch_free(bc);
        return;
    }
    if (!pd_req_park(req)) { /* coordinator.max_node_requests held: sent again, one by one */
        n->stats.chunks_deferred++;
        for (size_t i = 0; i < b->items_n; i++) {
            if (bc->item[i].job >= 0) {
                pd_window_t *w = pd_windows_get(n->win, bc->item[i].window);
                w->incoming[bc->item[i].in].busy = false;
                bc->item[i].job = -1;
                batch_set(bc, i, PROFD_ELIMIT, "request pool full: send it again");
            }
        }
        pd_job_free(PD_JOB(job));
        batch_reply(n, bc);
        batch_free(bc);
        return;
    }
    job->done = chunks_done;
    job->arg = bc;
    bc->files = (int64_t)job->n;
    bc->bytes = (int64_t)plen;
    n->batch_files += bc->files;
    n->batch_bytes += bc->bytes;
    if (pd_job_submit(&n->loop->uv, PD_JOB(job)) != 0) {
        n->batch_files -= bc->files;
        n->batch_bytes -= bc->bytes;
        for (size_t i = 0; i < b->items_n; i++) {
            if (bc->item[i].job >= 0) {
                pd_window_t *w = pd_windows_get(n->win, bc->item[i].window);
                w->incoming[bc->item[i].in].busy = false;
            }
        }
        pd_job_free(PD_JOB(job));
        batch_free(bc);
        pd_req_reply_error(req, PROFD_EINTERNAL, "cannot queue the write");
    }
    return;
nomem:
    for (size_t i = 0; bc && bc->item && i < b->items_n; i++) {
        if (bc->item[i].job >= 0 && i < b->items_n) {
            pd_window_t *w = pd_windows_get(n->win, bc->item[i].window);
            if (w && bc->item[i].in < w->nincoming) {
                w->incoming[bc->item[i].in].busy = false;
            }
        }
    }
    pd_job_free(PD_JOB(job));
    if (bc) {
        batch_free(bc);
    }
    pd_req_reply_error(req, PROFD_ENOMEM, "out of memory");
}

void pd_remote_node_lost(pd_node_t *n, const char *node, const char *reason)
{
    char why[256];
    snprintf(why, sizeof(why), "node %s %s before its files arrived", node, reason);
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        for (size_t i = 0; i < w->nincoming; i++) {
            pd_incoming_t *in = &w->incoming[i];
            pd_member_t *m = in->done ? NULL : &w->members[in->member];
            if (m == NULL || strcmp(m->node, node) != 0) {
                continue;
            }
            char part[PD_PATH_MAX + 600], root[PD_PATH_MAX];
            snprintf(part, sizeof(part), "%s/%s/%s.part", w->job, w->name, in->path);
            snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
            if (!in->busy) {
                pd_confine_unlink(root, part);
            }
            incoming_finished(n, w, in, PP_CAP_FAILED, why);
        }
    }
}
