// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The node link's state (link.c) and the files it streams to the
 * coordinator (linkstream.c): private to daemon/cluster. */
#ifndef PD_LINKSTREAM_H
#define PD_LINKSTREAM_H

#include <uv.h>
#include <xxhash.h>

#include "node.h"
#include "reqc.h"

typedef struct pd_link pd_link_t; /* as in link.h */

#define BACKOFF_MAX_MS   2000
#define CHUNK_TIMEOUT_MS 30000
#define MAX_XFERS        16 /* chunks in flight; files holding a buffer */
#define PIPE_MAX         8  /* chunks of one file in flight (the coordinator says how many) */
#define MAX_RESULTS      16 /* requests of results in flight: not one round trip after another */
#define RESULTS_BATCH    64 /* results in one node_results request at most */
#define CLOCK_SAMPLES    16
#define FILES_BATCH      64 /* whole small files in one chunks request at most */

/* A worker's result for a window, queued until the coordinator answers:
 * buf holds it encoded as a node_result_item. */
typedef struct fwd {
    bool out; /* sent, no reply yet */
    int64_t window;
    int64_t client;
    char *buf;
    size_t len;
    struct fwd *next;
} fwd_t;

/* A request of results in flight: its results in order, one node_result
 * (single: to a coordinator that takes no batches) or a node_results. */
typedef struct fwd_req {
    pd_link_t *l;
    bool used, single;
    size_t n;
    fwd_t *f[RESULTS_BATCH];
} fwd_req_t;

/* X_HELD: waits until the coordinator acknowledged the capture's result;
 * X_READY: read whole, waits to go in a chunks request; X_BATCHED: in one */
enum { X_HELD, X_IDLE, X_READING, X_READY, X_BATCHED };

typedef struct xfer xfer_t;

/* A chunk sent, no answer yet: where it ends. */
typedef struct sent {
    xfer_t *x;
    int64_t end;
    bool used;
} sent_t;

struct xfer {
    pd_link_t *l;
    int64_t window; /* local id */
    int64_t remote; /* the coordinator's id */
    int64_t client;
    char path[512]; /* relative to the window folder */
    char src[PD_PATH_MAX];
    int64_t size;
    /* the next byte to send; the coordinator's last answer (it holds the
     * file's first `have` bytes) and the most it ever said (the backlog
     * counts what is above it) */
    int64_t next, have, acked;
    int fd;
    int state;
    int inflight;   /* chunks sent, no answer yet (sent[]) */
    bool tail_sent; /* the chunk that ends the file is out */
    bool rewind;    /* a chunk was not taken: once none is out, send again from `have` */
    bool gone;      /* delivered or refused: freed once nothing of it runs */
    bool alone;     /* sent in chunks of its own, never in a chunks request */
    int64_t retry_ms;
    int64_t backoff_ms; /* the coordinator took nothing of the last chunk (a full disk) */
    /* the file is hashed as it is read to be sent (its checksum goes with
     * its last chunk): the state over its first `hashed` bytes (a chunk
     * sent again is not hashed again: the spool's file does not change) */
    XXH64_state_t *hs;
    int64_t hashed;
    int64_t read_at; /* the read running: where; below `next` it only hashes */
    char *buf;
    size_t len;
    uv_fs_t req;
    sent_t sent[PIPE_MAX];
    struct xfer *next_x;
};

/* A chunks request in flight: its files in order. */
typedef struct xbatch {
    pd_link_t *l;
    bool used;
    size_t n;
    xfer_t *x[FILES_BATCH];
} xbatch_t;

struct pd_link {
    pd_node_t *n;
    void (*pump)(pd_link_t *l); /* link.c's: whatever can go out now */
    pd_reqc_t *ctl;
    pd_reqc_t *data;
    uv_timer_t timer;
    bool registered, hello_out, roster_out, roster_dirty, summary_out, watch_out;
    int results_out;
    bool batches; /* the coordinator takes node_results (its node_welcome) */
    bool files;   /* the coordinator takes chunks: whole small files, several a request */
    fwd_req_t reqs[MAX_RESULTS];
    char coord[64]; /* the coordinator's instance */
    int64_t gen;
    int64_t backoff_ms, next_try_ms, last_summary_ms;
    fwd_t *results, **results_tail;
    xfer_t *xfers;
    xbatch_t xbatches[MAX_XFERS]; /* each counts one in nxfers_out */
    int nxfers_out;
    int64_t coord_queue; /* chunks of a file the coordinator holds behind a write (its acks) */
    int nbufs;           /* files holding a read buffer (begun, not finished) */
    /* files read whole for a chunks request (X_READY: their buffers not in
     * nbufs), and their bytes: up to FILES_BATCH and chunk_bytes are read
     * ahead, so that a request carries up to FILES_BATCH files */
    int nready;
    int64_t ready_bytes;
    int64_t backlog_files, backlog_bytes;
    /* this node's clock against the coordinator's, from the summaries'
     * round trips: the sample with the smallest error of the recent ones */
    int64_t summary_sent_us;
    int64_t clk_off[CLOCK_SAMPLES], clk_err[CLOCK_SAMPLES];
    int clk_n, clk_pos;
};

/* What follows is linkstream.c's. The coordinator is gone (registers
 * again after a pause). */
void pd_link_lost(pd_link_t *l, const char *why);
/* The reply in body to a request that ended with rv: 0 with *m (of type
 * want, unless PP_T_NONE); else rv, the error the coordinator answered, or
 * PROFD_EPROTO for another type. */
int pd_link_reply_of(int rv, const void *body, size_t len, pp_type_t want, pp_msg_t *m);
void pd_link_delivered(pd_link_t *l, int64_t id); /* one thing of window id went */

/* A file of capture c queued (sent once its result is
 * acknowledged); the reads and chunks that can start now; every file
 * freed (pd_link_fini). */
void pd_link_queue_file(pd_link_t *l, pd_window_t *w, int64_t client, const pp_capture_t *c,
                        const pp_file_t *f);
void pd_link_stream_pump(pd_link_t *l, int64_t now);
void pd_link_stream_fini(pd_link_t *l);

#endif
