// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Windows and their captures: the table of windows a daemon runs, who is
 * expected to capture in each, what each member reported, and when a window
 * has nothing left to wait for. Pure: no clock (times are parameters), no
 * I/O, no sockets. What the table cannot do itself it asks for through the
 * hooks the composition root installs (gather a capture, finish a window)
 * and what others must hear of it it announces through them (plans changed,
 * state worth keeping changed). Loop thread only.
 */
#ifndef PD_WINDOWS_H
#define PD_WINDOWS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "plan.h"
#include "profd/proto.h"
#include "uix.h"
#include "registry.h"

typedef struct pd_member {
    int64_t client;
    /* names: the registry's interned copies (pd_registry_name; never NULL,
     * "" none), which outlive the window */
    const char *role; /* the primary role */
    const char *host;
    const char *node;
    int64_t rank, replica_rank, pid;
    int selector;
    /* a process hosting several roles: all of them, the primary first, with
     * their ranks; `selected` (bit i: roles[i]) those whose phases the window
     * captures, `selnames` their names (pointing into roles). NULL, 0 for a
     * process hosting one role. */
    pd_role_t *roles;
    size_t nroles;
    uint32_t selected;
    char **selnames;
    size_t nselnames;
    /* its capture folders end in -pid<PID>: a member that joined the window
     * before it has its rank (or one of its role ranks) and host */
    bool pid_dir;
    int64_t node_client; /* coordinator: the id its node daemon gave it; 0 local */
    int64_t uid;         /* the uid its files must belong to (the rank's), -1 any */
    pp_member_state_t state;
    pp_capture_t *caps;
    size_t ncaps;
    bool *gathered; /* per capture: its gathering finished (ncaps of them, or NULL) */
    /* coordinator: its node came back as a new daemon before the member's
     * capture began; bound again to the same process (node, role, rank,
     * host, pid) when it registers through it, lost if not by then; 0 */
    int64_t rebind_until_ms;
    bool jdirty; /* changed since the journal last wrote it */
} pd_member_t;

/* Coordinator: a file of a remote capture still arriving from its node. */
#define PD_INCOMING_PATH_MAX 511 /* bytes of an incoming file's path */

typedef struct pd_incoming {
    char *path;    /* relative to the window folder; owned (pd_windows_add_incoming) */
    size_t member; /* index in the window's members */
    size_t cap, file;
    int64_t size;
    char checksum[32];
    int64_t have;   /* bytes written to <path>.part */
    int mismatches; /* transfers that failed the checksum (PD_REMOTE_MAX_MISMATCHES) */
    bool busy;      /* a write is running */
    bool warned;    /* a failed write was logged (once a streak) */
    bool done;
    bool jdirty; /* added or changed since the journal last wrote it */
    /* the running xxh64 of the bytes received so far (an XXH64_state_t that
     * cluster/remote.c allocates with the file's first chunk and frees when
     * it is done: the file is hashed as it arrives) over the first `hashed`
     * bytes; not kept over a restart */
    void *hash;
    int64_t hashed;
} pd_incoming_t;

typedef struct pd_window {
    int64_t id;
    char name[PP_MAX_NAME + 1];
    char job[PP_MAX_NAME + 1];
    pp_window_spec_t spec; /* the request, owned copy */
    int64_t first, last;   /* inclusive; last PP_NONE = open */
    pp_window_state_t state;
    pd_member_t *members;
    size_t nmembers, capm;
    /* their index by client id, brought up to date by pd_windows_member; a
     * member bound to another client is put in again under its new id */
    pd_uix_t mix;
    /* and by host, for the shared-folder check of pd_windows_add_member */
    pd_uix_t hix;
    char **warnings;
    size_t nwarnings;
    char reason[256];
    char dir[PP_MAX_PATH]; /* <save_path>/<job>/<name> */
    size_t root_len;       /* dir[0..root_len) is the save tree root (save_path) */
    int64_t bytes;
    _Atomic int64_t claimed;   /* bytes the window's gathering claimed from its budget */
    _Atomic int64_t reserved;  /* room kept for its manifest, beyond the base (gather.h) */
    int64_t manifest_retry_ms; /* the manifest could not be written yet: try again then; 0 */
    int manifest_tries;
    int manifest_rv;         /* how the last manifest write went (node/finish.c) */
    char manifest_why[256];  /* and why, when it failed */
    int pending;             /* gather / manifest jobs and incoming files outstanding */
    bool mirror;             /* node daemon: a window the coordinator planned */
    int64_t remote_id;       /* mirror: the coordinator's id (-1: that coordinator is gone) */
    bool forwarded;          /* node daemon: results sent to the coordinator */
    bool trash;              /* spool copies wait in .trash/w<id> for the manifest */
    char *origin;            /* the profiling config's request that made it (encoded); NULL */
    pd_incoming_t *incoming; /* coordinator: files arriving from nodes */
    size_t nincoming, capincoming;
    pd_uix_t inix; /* their index by path, brought up to date by pd_windows_incoming */
    int64_t created_ms, done_ms;
    /* retention (node/retention.c) removed its folder from the tree: why
     * ("older than 30d"); "" not pruned */
    char pruned[128];
    /* an upper layer still works on it (the after-window hook runs or
     * waits to, node/hook.c, which keeps the hook's state itself): the
     * table does not forget it */
    bool held;
    /* its record (node/report.c): steps.json as written at its end, "xxh64:<hex>" of
     * its bytes and their count; "" none (a window from before records) */
    char record[32];
    int64_t record_bytes;
    /* compacted (pd_windows_compact): a done window whose manifest the
     * journal knows is written keeps its members' identity and its counts
     * only; its members' captures and its incoming files are gone from
     * memory, read back from the manifest when asked for (node/wcaps.c).
     * captured: its captures by pp_capture_status_t, kept when compacted */
    bool compact;
    int64_t captured[5];
    /* slim: compacted once, its members then freed too (their index, their
     * journal marks): what is needed of them is kept (ranks, uid, tool,
     * mode, roles, selector: owned) and journalled with the window; members
     * it has now and then were rebuilt from its manifest's captures
     * (pd_windows_uncompact), freed again when compacted */
    bool slim;
    pp_state_kept_t kept;
    /* when its captures were last read back from its manifest (node/wcaps.c:
     * kept PD_WCAPS_KEEP_MS before compacted again); 0 never */
    int64_t read_back_ms;
    bool jdirty; /* the window's own fields changed since the journal wrote them */
    /* the indices of the members and incoming files marked since the
     * journal last wrote them (pd_member_mark, pd_incoming_mark), so that
     * a write visits what changed, not every member; jscan: a list could
     * not grow, the journal looks at every flag instead */
    size_t *jmembers, njmembers, capjmembers;
    size_t *jincoming, njincoming, capjincoming;
    bool jscan;
    struct pd_window *next;
} pd_window_t;

/* What the table asks of, and tells, the rest of the daemon. Every hook is
 * optional. */
typedef struct pd_windows_hooks {
    /* Plans changed (a window made, joined, stopped or cancelled): a new
     * plan generation for the workers and nodes. */
    void (*changed)(void *arg);
    /* Something worth keeping over a restart changed (a report, a lost
     * member, a file arrived) while the plans did not. */
    void (*dirty)(void *arg);
    /* Capture `cap` of member m has a folder to gather (owner: the uid the
     * files must belong to, -1 any). The hook counts w->pending while the
     * gathering runs, or marks the capture failed. */
    void (*gather)(void *arg, pd_window_t *w, pd_member_t *m, size_t cap, int64_t owner);
    /* Every member reported or is lost and nothing is pending: write the
     * manifest, or forward the window to the coordinator. */
    void (*complete)(void *arg, pd_window_t *w);
    void *arg;
} pd_windows_hooks_t;

typedef struct pd_windows {
    pd_window_t *head, *tail;
    int64_t next_id;
    size_t count;
    size_t max_live; /* unfinished windows at most (limits.max_windows); 0 = no limit */
    bool follower;   /* a node daemon of a coordinator: it decides who joins */
    pd_log_t *log;   /* may be NULL */
    pd_windows_hooks_t hooks;
} pd_windows_t;

void pd_windows_init(pd_windows_t *ws, pd_log_t *log, size_t max_live);
void pd_windows_fini(pd_windows_t *ws);

pd_window_t *pd_windows_get(const pd_windows_t *ws, int64_t id);
/* Pending or active: members still capture. */
bool pd_windows_running(const pd_window_t *w);
/* Done, cancelled or failed: nothing more happens to it. */
bool pd_windows_finished(const pd_window_t *w);
/* Windows not yet done or cancelled. */
size_t pd_windows_live(const pd_windows_t *ws);

/*
 * Creating windows, in two steps so that the caller can prepare the tree
 * root in between: resolve a request against the active ranks of `reg`
 * (the planner) and check the limit of unfinished windows; then create one
 * window per step segment below `root`, with the selected ranks as members.
 * pd_windows_plan: 0 with *out filled (free with pd_plan_out_free), or
 * PROFD_EINVAL / PROFD_ELIMIT / PROFD_ENOMEM with the reason in `err`.
 * pd_windows_add: 0 with the new windows' ids in *ids (malloc'ed, *nids of
 * them; `out` is consumed in every case), or PROFD_ENOMEM.
 */
int pd_windows_plan(pd_windows_t *ws, const pd_registry_t *reg, const pp_window_spec_t *spec,
                    const pd_plan_params_t *p, pd_plan_out_t *out, char *err, size_t errlen);
int pd_windows_add(pd_windows_t *ws, const pd_registry_t *reg, const pp_window_spec_t *spec,
                   pd_plan_out_t *out, const char *root, int64_t now_ms, int64_t **ids,
                   size_t *nids);

/* A worker registered: a member kept over a restart that it is becomes its
 * again, and it joins the running windows it matches (not on a follower). */
void pd_windows_on_register(pd_windows_t *ws, const pd_rank_t *k);
/* A worker is gone: its expected captures fail with `reason`. */
void pd_windows_on_lost(pd_windows_t *ws, const pd_rank_t *k, const char *reason);
/* A worker reported a window's captures: checked (pd_windows_report), each
 * capture with a folder handed to the gather hook. 0, or PROFD_ENOENT (no
 * such window), PROFD_ESTATE (not a member, or already reported) with a
 * reason. */
int pd_windows_on_result(pd_windows_t *ws, const pd_rank_t *k, pp_result_t *res, char *err,
                         size_t errlen);
/* Coordinator: a node is gone (or did not come back after a restart): its
 * expected members that no rank stands for fail with `reason`. */
void pd_windows_node_gone(pd_windows_t *ws, const char *node, const char *reason);
/* Coordinator: node came back as a new daemon (it forgot its windows): its
 * expected members whose capture has not begun (their rank, looked up in
 * reg, before the window's first step) wait until `until_ms` to be bound
 * again to their process (pd_windows_rebind) instead of failing. */
void pd_windows_node_restarted(pd_windows_t *ws, const pd_registry_t *reg, const char *node,
                               int64_t until_ms);
/* Members still waiting for that past their time fail with the reason. */
void pd_windows_rebind_expire(pd_windows_t *ws, int64_t now_ms);
/* The daemon did not run for `ms` (a stall): the deadlines above move as
 * far, so that the stall is not counted as a worker's absence. */
void pd_windows_credit(pd_windows_t *ws, int64_t ms);
/* No rank of `job` is active any more: its running windows with nobody
 * left to wait for (none selected yet) expire, cancelled with the reason
 * "expired: job J has no registered rank left", rather than wait for a
 * later job of the same name. Not on a follower (its coordinator decides). */
void pd_windows_job_gone(pd_windows_t *ws, const char *job, int64_t now_ms);
/* A rank registered: members kept over a restart that it is (the same node
 * and node client id; or the same role, rank, host and pid) are its again.
 * true when an expected member was bound again (its plan changed). */
bool pd_windows_rebind(pd_windows_t *ws, const pd_rank_t *k);
/* A worker began a step (window state only). */
void pd_windows_on_step(pd_windows_t *ws, const pd_rank_t *k);

/* Stop a window at an aligned step boundary (running) or cancel it (not
 * started). PROFD_ENOENT, PROFD_ESTATE (already over). */
int pd_windows_stop(pd_windows_t *ws, const pd_registry_t *reg, int64_t id,
                    const pd_plan_params_t *p, int64_t now_ms, char *err, size_t errlen);
/* Cancel a window that has not finished (the coordinator dropped it, or is
 * gone): state cancelled with `reason`. */
void pd_windows_cancel(pd_windows_t *ws, pd_window_t *w, int64_t now_ms, const char *reason);

/* The plan of one worker: entries for every running window it is expected
 * in. Strings are borrowed from the windows; free only out->entries. */
int pd_windows_plan_for(const pd_windows_t *ws, const pd_rank_t *k, pp_plan_t *out);

/* The window as profctl sees it (strings borrowed; free with
 * pd_windows_info_free). detail: include per-rank states. */
void pd_windows_info(const pd_window_t *w, bool detail, pp_window_t *out);
void pd_windows_info_free(pp_window_t *out);

/* The window's tool and mode over its members ("mixed" / PP_MODE_MIXED when
 * they differ), and its roles: the selectors', else the members' (an array
 * of borrowed strings, malloc'ed; NULL when none or out of memory). */
const char *pd_windows_tool(const pd_window_t *w);
pp_mode_t pd_windows_mode(const pd_window_t *w);
char **pd_windows_roles(const pd_window_t *w, size_t *n);

/* ---- shared with the multi-node modules ---- */

pd_member_t *pd_windows_member(pd_window_t *w, int64_t client);
/* Member i of w was bound to another client (its client id changed, as
 * pd_windows_rebind does): found under the new id from now on. */
void pd_windows_member_bound(pd_window_t *w, size_t i);
/* Add rank k (the registry's: the member keeps its names) as a member
 * selected by `selector` for the roles in `roles` (bit i: k->roles[i]; 0:
 * every role). Its folders get -pid<PID> when a
 * member already in the window would have the same folder (the same host
 * and replica rank, and the same rank or the same rank in one of its
 * roles). NULL when out of memory. */
pd_member_t *pd_windows_add_member(pd_window_t *w, const pd_rank_t *k, int selector,
                                   uint32_t roles);
/* Set a member's roles: `roles` (n of them, the primary first) of which
 * `selected` are captured. 0 or PROFD_ENOMEM (the member unchanged). */
int pd_windows_member_roles(pd_member_t *m, const pd_role_t *roles, size_t n, uint32_t selected);
/* A member's rank in `role` (its primary rank for "e2e"), -1 when the
 * member does not host that role. */
int64_t pd_windows_role_rank(const pd_member_t *m, const char *role);
/* Append a window made elsewhere (a mirror, one read back from a journal);
 * the table takes it. */
void pd_windows_append(pd_windows_t *ws, pd_window_t *w);
void pd_windows_free_one(pd_window_t *w);
/* Nothing left to wait for (every member reported or lost, nothing
 * pending): state gathering, and the complete hook runs. */
void pd_windows_maybe_finish(pd_windows_t *ws, pd_window_t *w);
/* The hooks say: plans changed / state worth keeping changed. */
void pd_windows_changed(pd_windows_t *ws);
void pd_windows_dirty(pd_windows_t *ws);
/* Window w (and member m, when not NULL) changed: marked for the journal,
 * and the dirty hook runs. Modules that change a window's fields themselves
 * say so through it. */
void pd_windows_touch(pd_windows_t *ws, pd_window_t *w, pd_member_t *m);
/* Member m of w changed: marked for the journal (no hook: the caller
 * runs it, or pd_windows_touch does). */
void pd_member_mark(pd_window_t *w, pd_member_t *m);
/* Incoming file in of w changed (or is new): marked for the journal. */
void pd_incoming_mark(pd_window_t *w, pd_incoming_t *in);
/* After the journal wrote (or a load read) them: no mark left on w. */
void pd_windows_marks_clear(pd_window_t *w);
void pd_windows_set_status(pp_capture_t *c, pp_capture_status_t status, const char *reason);
/* Coordinator: a file to arrive, zeroed but its path (copied) and marked
 * for the journal (jdirty); the caller fills in the rest. NULL without memory or when the path is
 * longer than PD_INCOMING_PATH_MAX. */
pd_incoming_t *pd_windows_add_incoming(pd_window_t *w, const char *path);
/* The file arriving at path (its index in *idx), or NULL: found by an
 * index, not a scan (a window of 16,384 members has twice as many files,
 * and every chunk of each looks its file up). */
pd_incoming_t *pd_windows_incoming(pd_window_t *w, const char *path, size_t *idx);
/*
 * A member's report: move its captures into the member (*caps is taken),
 * stamp who captured them (the daemon's knowledge, not the report's), and
 * check each status, role, phase and folder; a capture that fails a check is
 * marked failed and loses its folder, a missed one has none. rel: folders
 * relative to the window (from a node daemon) rather than to the spool.
 * Returns 0 with *m and *w, or PROFD_ENOENT / PROFD_ESTATE with a reason
 * (*m and *w untouched).
 */
int pd_windows_report(pd_windows_t *ws, const pd_rank_t *k, int64_t window, pp_capture_t **caps,
                      size_t *ncaps, bool rel, pd_window_t **w, pd_member_t **m, char *err,
                      size_t errlen);
/* Is c->dir where a capture of member m belongs? rel: relative to the
 * window folder ("<capdir>[/step<N>]") rather than to the spool. */
bool pd_windows_capdir_ok(const pd_window_t *w, const pd_member_t *m, const pp_capture_t *c,
                          bool rel);

/* Captures of w by status (pp_capture_status_t, 5 of them): counted over
 * its members', or the counts kept when it is compacted. */
void pd_windows_captured(const pd_window_t *w, int64_t by_status[5]);
/* Compact a done window: its counts kept (pd_windows_captured) and what
 * it needs of its members (w->kept, the first time: w->slim),
 * its members with their captures, and its incoming files freed. Again on
 * a compacted one: members read back are freed, the kept counts stay. */
void pd_windows_compact(pd_window_t *w);
/* A done window's incoming files (every one arrived) freed, and their
 * index: what pd_windows_compact frees of them, before its captures. */
void pd_windows_drop_incoming(pd_window_t *w);
/*
 * A compacted window's captures put back into its members from its
 * manifest record `man` (its captures taken from it: man->captures NULL
 * afterwards), each to the member that made it (the same host, pid,
 * replica rank, and its rank in the capture's role or its own rank), in
 * the manifest's order; w->compact false until pd_windows_compact again.
 * A slim window's members are rebuilt first, one per process (host, pid,
 * replica rank) and rank its captures name (one per process when that
 * makes more than it had: a process of several roles), ordered by rank,
 * replica rank, host, pid: role and rank (an end-to-end capture's first
 * role and rank, else the first capture's), state (lost: one failed
 * capture without phase, folder or files, as a lost member's; else
 * reported), the kept selector, its node daemon (w->kept's pairs, else its
 * host); no client, uid -1, no roles list. Every member of a done window
 * has a capture (a report or a loss gives it one) but one that reported
 * none: that one is not rebuilt. More processes than it had members:
 * PROFD_EINVAL.
 * 0, or PROFD_EINVAL with why (the manifest is another window's, a capture
 * belongs to no member, the counts differ) or PROFD_ENOMEM: w left
 * compacted, captures none (and members none when slim).
 */
int pd_windows_uncompact(pd_window_t *w, pp_manifest_t *man, char *err, size_t errlen);

/* Its members: how many it selected (kept when slim), and the uid its
 * bytes are charged to (the first member's with one; -1 none). */
size_t pd_windows_ranks(const pd_window_t *w);
int64_t pd_windows_owner_uid(const pd_window_t *w);
/* What a done window keeps of its members when they are freed, made from
 * them (owned: free with pp_record_free of pp_desc_state_kept). 0 or
 * PROFD_ENOMEM. */
int pd_windows_keep(const pd_window_t *w, pp_state_kept_t *out);
/* Free w's members, their indexes and journal marks (nmembers 0). */
void pd_windows_drop_members(pd_window_t *w);

/* Drop finished windows beyond the most recent `keep` (bounded memory):
 * the pruned ones first; never one whose hook runs. */
void pd_windows_trim(pd_windows_t *ws, size_t keep);

#endif
