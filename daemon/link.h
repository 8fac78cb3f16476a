/*
 * The node side of the node <-> coordinator link (a node daemon is a profd
 * with coordinator.url set). It registers the node with its roster of
 * workers, sends compact step summaries per role (not every event), keeps a
 * long poll for the node's plan (applied by mirror.c as mirror windows),
 * forwards the captures of its workers and streams their files in chunks
 * with checksums, resuming where the coordinator stopped receiving after a
 * dropped link. Training never waits for any of it: with the coordinator
 * away, workers keep their plans and results queue up.
 */
#ifndef PD_LINK_H
#define PD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pd_daemon;
struct pd_window;

typedef struct pd_link pd_link_t;

/* Node mode: connect to cfg.coordinator_url. 0 or PROFD_* with err. */
int pd_link_init(struct pd_daemon *d, char *err, size_t errlen);
void pd_link_fini(struct pd_daemon *d);

/* A worker registered, was lost or left. */
void pd_link_roster_changed(struct pd_daemon *d);
/* Every local capture of a mirror window is gathered: send the results and
 * stream the files; the window is done when the coordinator has them. */
void pd_link_forward(struct pd_daemon *d, struct pd_window *w);

/* For status displays. */
bool pd_link_connected(const struct pd_daemon *d);
/* Files and bytes not yet delivered to the coordinator. */
void pd_link_backlog(const struct pd_daemon *d, int64_t *files, int64_t *bytes);

#endif
