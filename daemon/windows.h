/*
 * Windows and their captures: the table of windows this daemon runs, who is
 * expected to capture in each, what each worker reported, and when a window
 * is complete (every member reported or lost, every capture gathered, the
 * manifest written). Loop thread only.
 */
#ifndef PD_WINDOWS_H
#define PD_WINDOWS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "profd/proto.h"

struct pd_daemon;
struct pd_rank;

typedef enum pd_wstate {
    PD_W_PENDING,   /* planned; no member reported yet */
    PD_W_ACTIVE,    /* some member reported or began the first step */
    PD_W_GATHERING, /* every member reported or lost; files moving */
    PD_W_DONE,      /* manifest written */
    PD_W_CANCELLED, /* stopped before it started */
} pd_wstate_t;

typedef enum pd_mstate {
    PD_M_EXPECTED,
    PD_M_REPORTED,
    PD_M_LOST,
} pd_mstate_t;

typedef struct pd_member {
    int64_t client;
    char role[PP_MAX_NAME + 1];
    char host[PP_MAX_NAME + 1];
    char node[PP_MAX_NAME + 1];
    int64_t rank, replica_rank, pid;
    int selector;
    int64_t node_client; /* coordinator: the id its node daemon gave it; 0 local */
    pd_mstate_t state;
    pp_capture_t *caps;
    size_t ncaps;
} pd_member_t;

/* Coordinator: a file of a remote capture still arriving from its node. */
typedef struct pd_incoming {
    char path[512]; /* relative to the window folder */
    size_t member;  /* index in the window's members */
    size_t cap, file;
    int64_t size;
    char checksum[32];
    int64_t have;   /* bytes written to <path>.part */
    int mismatches; /* transfers that failed the checksum (PD_REMOTE_MAX_MISMATCHES) */
    bool busy;      /* a write is running */
    bool done;
} pd_incoming_t;

typedef struct pd_window {
    int64_t id;
    char name[PP_MAX_NAME + 1];
    char job[PP_MAX_NAME + 1];
    pp_window_spec_t spec; /* the request, owned copy */
    int64_t first, last;   /* inclusive; last PP_NONE = open */
    pd_wstate_t state;
    pd_member_t *members;
    size_t nmembers, capm;
    char **warnings;
    size_t nwarnings;
    char reason[256];
    char dir[1024];  /* <save_path>/<job>/<name> */
    size_t root_len; /* dir[0..root_len) is the save tree root (save_path) */
    int64_t bytes;
    _Atomic int64_t claimed; /* bytes the window's gathering claimed from its budget */
    int pending;             /* gather / manifest jobs and incoming files outstanding */
    bool mirror;             /* node daemon: a window the coordinator planned */
    int64_t remote_id;       /* mirror: the coordinator's id (-1: that coordinator is gone) */
    bool forwarded;          /* node daemon: results sent to the coordinator */
    bool trash;              /* spool copies wait in .trash/w<id> for the manifest */
    char *origin;            /* the profiling config's request that made it (encoded); NULL */
    pd_incoming_t *incoming; /* coordinator: files arriving from nodes */
    size_t nincoming;
    int64_t created_ms, done_ms;
    struct pd_window *next;
} pd_window_t;

typedef struct pd_windows {
    pd_window_t *head, *tail;
    int64_t next_id;
    size_t count;
} pd_windows_t;

void pd_windows_init(pd_windows_t *ws);
void pd_windows_fini(pd_windows_t *ws);

pd_window_t *pd_windows_get(const pd_windows_t *ws, int64_t id);
/* Windows not yet done or cancelled. */
size_t pd_windows_live(const pd_windows_t *ws);

/*
 * Resolve a request against the registry and create its windows. Returns 0
 * with the new windows' ids in *ids (malloc'ed, *nids of them) and the plan
 * warnings appended to each window; or PROFD_EINVAL / PROFD_ELIMIT with a
 * reason in `err`.
 */
int pd_windows_create(struct pd_daemon *d, const pp_window_spec_t *spec, int64_t **ids,
                      size_t *nids, char *err, size_t errlen);

/* A worker registered: join it to the live windows it matches. */
void pd_windows_on_register(struct pd_daemon *d, const struct pd_rank *k);
/* A worker is gone: its pending captures fail with `reason`. */
void pd_windows_on_lost(struct pd_daemon *d, const struct pd_rank *k, const char *reason);
/* A worker reported a window's captures. 0, or PROFD_ENOENT (no such window),
 * PROFD_ESTATE (not a member, or already reported) with a reason. */
int pd_windows_on_result(struct pd_daemon *d, const struct pd_rank *k, pp_result_t *res, char *err,
                         size_t errlen);
/* Coordinator: a node is gone (or did not come back after a restart): its
 * expected members that no rank stands for fail with `reason`. */
void pd_windows_node_gone(struct pd_daemon *d, const char *node, const char *reason);
/* A rank registered: members kept over a restart that it is (the same node
 * and node client id; or the same role, rank, host and pid) are its again. */
void pd_windows_rebind(struct pd_daemon *d, const struct pd_rank *k);
/* A worker began a step (window state only). */
void pd_windows_on_step(struct pd_daemon *d, const struct pd_rank *k);

/* Stop a window at an aligned step boundary (running) or cancel it (not
 * started). PROFD_ENOENT, PROFD_ESTATE (already over). */
int pd_windows_stop(struct pd_daemon *d, int64_t id, char *err, size_t errlen);

/* The plan of one worker: entries for every live window it is expected in.
 * Strings are borrowed from the windows; free only out->entries. */
int pd_windows_plan_for(const pd_windows_t *ws, const struct pd_rank *k, pp_plan_t *out);

/* The window as profctl sees it (strings borrowed; free with
 * pd_windows_info_free). detail: include per-rank states. */
void pd_windows_info(const pd_window_t *w, bool detail, pp_window_t *out);
void pd_windows_info_free(pp_window_t *out);

const char *pd_windows_state_name(pd_wstate_t s);

/* ---- shared with the multi-node modules (mirror.c, remote.c, link.c) ---- */

pd_member_t *pd_windows_member(pd_window_t *w, int64_t client);
pd_member_t *pd_windows_add_member(pd_window_t *w, const struct pd_rank *k, int selector);
void pd_windows_append(pd_windows_t *ws, pd_window_t *w);
void pd_windows_free_one(pd_window_t *w);
/* Everyone reported and everything gathered: write the manifest (or, on a
 * node daemon, forward to the coordinator). */
void pd_windows_maybe_finish(struct pd_daemon *d, pd_window_t *w);
void pd_windows_set_status(pp_capture_t *c, const char *status, const char *reason);
/*
 * A member's report: move its captures into the member (*caps is taken),
 * stamp who captured them (the daemon's knowledge, not the report's), and
 * check each status, role, phase and folder; a capture that fails a check is
 * marked failed and loses its folder, a missed one has none. rel: folders
 * relative to the window (from a node daemon) rather than to the spool.
 * Returns the member and *w, or NULL with *rv PROFD_ENOENT / PROFD_ESTATE.
 */
pd_member_t *pd_windows_report(struct pd_daemon *d, const struct pd_rank *k, int64_t window,
                               pp_capture_t **caps, size_t *ncaps, bool rel, pd_window_t **w,
                               int *rv, char *err, size_t errlen);
/* Is c->dir where a capture of member m belongs? rel: relative to the
 * window folder ("<capdir>[/step<N>]") rather than to the spool. */
bool pd_windows_capdir_ok(const pd_window_t *w, const pd_member_t *m, const pp_capture_t *c,
                          bool rel);

/* Drop finished windows beyond the most recent `keep` (bounded memory). */
void pd_windows_trim(pd_windows_t *ws, size_t keep);
/* Remove spool/rel (a whole tree) on the thread pool; nobody waits for it. */
void pd_windows_remove_spool(struct pd_daemon *d, const char *rel);

#endif
