// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The after-window hook (hooks.after_window.*): a command run by /bin/sh -c
 * once a window's manifest is written (an upload: rclone copy, aws s3
 * sync), in the window's folder, with PROFD_WINDOW_PATH, PROFD_WINDOW_ID,
 * PROFD_WINDOW_NAME, PROFD_JOB and PROFD_SAVE_PATH in its environment, as
 * the configured unprivileged user, in a process group of its own, killed
 * after its timeout. Spawned with uv_spawn: the loop never waits for it.
 * What became of it (its state, exit status and the tail of its output)
 * is kept here, in a record of the window's beside the window table (the
 * table's window only says it is `held` while the hook runs); the journal
 * (either role's) writes it with the window
 * (pd_hook_record), `profctl windows` shows it (pd_hook_info), and a
 * restart reads it back (pd_hook_restore). Loop thread only.
 */
#ifndef PD_HOOK_H
#define PD_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

/* A hook's state while the window's report is written once more (the
 * steps after the window still to come): it runs after that write, and
 * again after a restart that came first. */
#define PD_HOOK_WAITING "waiting for the report's last write"
/* The bytes of a hook's output a window's record keeps (its end). */
#define PD_HOOK_TAIL 2048

typedef struct pd_hook pd_hook_t;

/* The hook of node n (n->cfg's hooks.after_window.*), also when none is
 * configured (every call is then a no-op). Resolves the user: a daemon
 * running as root needs one that is not root, a daemon that is not root
 * may name only itself. 0 with *out; PROFD_EINVAL with a one-line reason
 * naming the key in err; PROFD_ENOMEM. */
/* The checks pd_hook_init makes of the settings (the hook's user), without
 * a daemon: 0, or PROFD_EINVAL with the reason in err. */
int pd_hook_check(const pd_config_t *cfg, char *err, size_t errlen);
int pd_hook_init(pd_hook_t **out, pd_node_t *n, char *err, size_t errlen);
/* w's manifest is written: run the hook for it (its record says "running"), or
 * record why it could not start. */
void pd_hook_window(pd_hook_t *h, pd_window_t *w);
/* The hook's part of window `window`'s record (hook, hook_exit,
 * hook_output; borrowed from h), left as it is when the window has none. h
 * may be NULL. */
void pd_hook_record(pd_hook_t *h, int64_t window, pp_state_window_t *s);
/* The same into the window's row of `profctl windows`. */
void pd_hook_info(pd_hook_t *h, int64_t window, pp_window_t *out);
/* w's hook as its record says (a journal read back): w is held while the
 * record says the hook runs or waits. 0 or PROFD_ENOMEM. */
int pd_hook_restore(pd_hook_t *h, pd_window_t *w, const pp_state_window_t *s);
/* The window's hook waits for the report's last write (pd_hook_defer). */
bool pd_hook_waiting(pd_hook_t *h, int64_t window);
/* After a restart: run again the hooks the journal says were running. */
void pd_hook_resume(pd_hook_t *h);

/* The window is done but its report is written once more later: its hook
 * waits for that write (pd_hook_window then), kept over a restart and
 * sparing the window from retention meanwhile. No hook configured: nothing. */
void pd_hook_defer(pd_hook_t *h, pd_window_t *w);
/* The daemon stops: kill the running hooks (their windows stay "running"
 * in the journal and run again after a restart) and close the handles. */
void pd_hook_stop(pd_hook_t *h);
/* After the loop ran out. NULL is fine. */
void pd_hook_fini(pd_hook_t *h);

#endif
