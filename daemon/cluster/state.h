// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A coordinator's state on disk: its instance id, the node daemons it knew
 * and its unfinished windows (requests, members, reported captures, files
 * still arriving), saved after every change (coalesced, written as .part
 * and renamed) to <save_path>/.profd-coordinator.json and read back at
 * start. A restarted coordinator thus keeps its identity: node daemons
 * register again without dropping their windows, members are bound again
 * as their ranks come back (pd_windows_rebind), and files resume from the
 * .part on disk. Nodes that do not come back within
 * coordinator.node_timeout_ms are lost as usual.
 *
 * What a coordinator acknowledges it keeps: a reply that tells a node its
 * result, its file or its registration was taken, a plan that tells it of
 * a window, and the reply to a start wait (pd_state_reply_saved) until a
 * save holds what they tell, since the node forgets what was acknowledged.
 * Saves are written on the loop thread into the page cache (a killed
 * daemon loses nothing written; the fsync follows on the thread pool),
 * coalesced: at the end of a loop iteration while replies wait, but not
 * sooner than 50 ms, nor 3 times the last save's cost, after the last save
 * (a stream of replies shares few saves; at most a quarter of the loop's
 * time goes to saving a large state), else SAVE_DELAY_MS after a change
 * (or that gap). A save encodes again only the members marked since the
 * last (pd_windows_touch): the others' records come from a cache, so a
 * window of 16,384 members costs a copy, not an encoding, per save. A
 * save that fails (a full disk) is tried again every second, the replies
 * held meanwhile; the nodes wait, or time out and send again. Loop thread
 * only.
 */
#ifndef PD_STATE_H
#define PD_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "coord.h"
#include "node.h"

typedef struct pd_state_held pd_state_held_t;
typedef struct pd_state_wcache pd_state_wcache_t;

typedef struct pd_state {
    pd_node_t *n;
    pd_coord_t *coord; /* its node list is saved and awaited again; may be NULL */
    char *instance;    /* the daemon's instance id, restored by a load */
    size_t instance_len;
    uv_timer_t timer; /* saves within SAVE_DELAY_MS of a change; retries */
    uv_idle_t idle;   /* saves at the end of a loop iteration for held replies */
    uv_work_t sync;   /* the saved file's fsync */
    bool timer_ready, dirty, retrying, errlogged, syncing, sync_again;
    pd_state_held_t *held, **held_tail; /* replies waiting for a save */
    size_t nheld;
    int64_t saves;
    int64_t saved_us, save_cost_us; /* the last save: when it ended, what it took */
    /* each unfinished window's member records as the last save encoded
     * them: a save re-encodes only the members marked since
     * (pd_member_t.sdirty), not all of a window's thousands */
    pd_state_wcache_t *cache;
} pd_state_t;

/* Set up (no timer yet: a state can be loaded and saved without a loop). */
void pd_state_init(pd_state_t *s, pd_node_t *n, pd_coord_t *coord, char *instance,
                   size_t instance_len);
/* Save after changes from now on (a timer on n->loop). */
void pd_state_start(pd_state_t *s);

/* Read the state file if there is one (before the endpoints serve). 0, or
 * PROFD_ECONFIG / PROFD_EIO with the reason in err (a corrupt file: the
 * daemon does not start rather than lose it). */
int pd_state_load(pd_state_t *s, char *err, size_t errlen);

/* Something worth saving changed: save soon. */
void pd_state_changed(pd_state_t *s);
/* Send the reply buf (owned from here) to req once a save holds the
 * state as it is now: at once when nothing changed since the last save,
 * else after the next one (the request parked meanwhile). */
void pd_state_reply_saved(pd_state_t *s, pd_req_t *req, char *buf, size_t len);

/* At stop, before the endpoints close: a last save; the held replies go
 * unanswered (the nodes send again to the restarted coordinator); no more
 * saves on the timer. */
void pd_state_stop(pd_state_t *s);
/* After the loop: save now, synchronously; the cache freed. */
void pd_state_fini(pd_state_t *s);

#endif
