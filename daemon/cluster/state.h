/*
 * A coordinator's state on disk: its instance id, the node daemons it knew
 * and its unfinished windows (requests, members, reported captures, files
 * still arriving), saved after every change (coalesced, written as .part
 * and renamed) to <save_path>/.profd-coordinator.json and read back at
 * start. A restarted coordinator thus keeps its identity: node daemons
 * register again without dropping their windows, members are bound again
 * as their ranks come back (pd_windows_rebind), and files resume from the
 * .part on disk. Nodes that do not come back within
 * coordinator.node_timeout_ms are lost as usual. Loop thread only.
 */
#ifndef PD_STATE_H
#define PD_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "coord.h"
#include "node.h"

typedef struct pd_state {
    pd_node_t *n;
    pd_coord_t *coord; /* its node list is saved and awaited again; may be NULL */
    char *instance;    /* the daemon's instance id, restored by a load */
    size_t instance_len;
    uv_timer_t timer; /* saves within SAVE_DELAY_MS of a change */
    bool timer_ready, dirty, saving;
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

/* At stop: no more saves on the timer (it closes with the loop). */
void pd_state_stop(pd_state_t *s);
/* After the loop: save now, synchronously. */
void pd_state_fini(pd_state_t *s);

#endif
