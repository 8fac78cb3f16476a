/*
 * A coordinator's state on disk: its instance id and its unfinished windows
 * (requests, members, reported captures, files still arriving), saved after
 * every change (coalesced, written as .part and renamed) to
 * <save_path>/.profd-coordinator.json and read back at start. A restarted
 * coordinator thus keeps its identity: node daemons register again without
 * dropping their windows, members are bound again as their ranks come back
 * (pd_windows_rebind), and files resume from the .part on disk. Nodes that
 * do not come back within coordinator.node_timeout_ms are lost as usual.
 */
#ifndef PD_STATE_H
#define PD_STATE_H

#include <stddef.h>

struct pd_daemon;

/* Coordinator mode: read the state file if there is one (before the
 * endpoints open). 0, or PROFD_ECONFIG / PROFD_EIO with the reason in err
 * (a corrupt file: the daemon does not start rather than lose it). */
int pd_state_load(struct pd_daemon *d, char *err, size_t errlen);

/* Something worth saving changed: save soon. */
void pd_state_changed(struct pd_daemon *d);

/* At stop: save now, synchronously, and release the timer. */
void pd_state_fini(struct pd_daemon *d);

#endif
