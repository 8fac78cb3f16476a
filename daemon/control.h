/*
 * The control endpoints: profctl and any nng peer speaking the control JSON,
 * on listen.control (ipc:// or tls+tcp://) and listen.control_remote
 * (tls+tcp://); plain tcp:// only with security.insecure_tcp_control.
 * Every request is checked in order: rate, size, JSON, version, known type,
 * schema (the codec), then access: read-only requests (status, windows) for
 * any peer that can connect; mutating ones (start, stop, apply) only for
 * permitted peers (see pd_control_permitted). Dispatch is by a table.
 */
#ifndef PD_CONTROL_H
#define PD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

struct pd_daemon;
struct pd_peer;

int pd_control_init(struct pd_daemon *d, char *err, size_t errlen);
void pd_control_fini(struct pd_daemon *d);

/* May this peer run mutating requests? ipc://: root, the daemon's uid,
 * security.allow_uids, or security.allow_gids holding the peer's gid or a
 * group of its user in the group database (the kernel gives only the
 * primary gid). tls+tcp://: a certificate that verified against the CA.
 * tcp://: only with security.insecure_tcp_control. */
bool pd_control_permitted(const struct pd_daemon *d, const struct pd_peer *peer);

/* Load a profiling config text (verl / MindSpeed / Megatron YAML) and create
 * its windows; used by `apply` and at start / SIGHUP for cfg.profile_config.
 * own: the daemon's own profiling config, read again on SIGHUP: its windows
 * remember the request that made them; a request the file still makes is
 * not planned twice, and a window of a request it no longer makes is
 * withdrawn when it has not started (one that runs finishes). Returns 0 with
 * the created window ids, or PROFD_ECONFIG / PROFD_EINVAL with the reason in
 * err (nothing changed then). */
int pd_control_apply_text(struct pd_daemon *d, const char *file, const char *text, size_t len,
                          char *const *overrides, size_t n_overrides, const char *job, bool own,
                          int64_t **ids, size_t *nids, char ***warnings, size_t *nwarnings,
                          char *err, size_t errlen);

#endif
