// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The node side of the node <-> coordinator link (a node daemon is a profd
 * with coordinator.url set). It registers the node with its roster of
 * workers, sends compact step summaries per role (not every event), keeps a
 * long poll for the node's plan (applied by mirror.c as mirror windows),
 * forwards the captures of its workers and streams their files in chunks
 * with checksums, resuming where the coordinator stopped receiving after a
 * dropped link. Training never waits for any of it: with the coordinator
 * away, workers keep their plans and results queue up. Loop thread only.
 */
#ifndef PD_LINK_H
#define PD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"

typedef struct pd_link pd_link_t;

/* Node mode: connect to cfg.coordinator_url. 0 and *out, or PROFD_* with
 * err. */
int pd_link_init(pd_link_t **out, pd_node_t *n, char *err, size_t errlen);
/* Disconnect; the link frees itself once its timer has closed. NULL is
 * fine. */
void pd_link_fini(pd_link_t *l);

/* The coordinator instance this node knew before a restart: a different
 * one after it drops the mirror windows (that coordinator is gone). */
void pd_link_set_coordinator(pd_link_t *l, const char *instance);
/* A worker registered, was lost or left. NULL is fine. */
void pd_link_roster_changed(pd_link_t *l);
/* Every local capture of a mirror window is gathered: send the results and
 * stream the files; the window is done when the coordinator has them. */
void pd_link_forward(pd_link_t *l, pd_window_t *w);

/* For status displays (NULL: not a node daemon). */
bool pd_link_connected(const pd_link_t *l);
/* Files and bytes not yet delivered to the coordinator. */
void pd_link_backlog(const pd_link_t *l, int64_t *files, int64_t *bytes);

#endif
