/*
 * Mirror windows: on a node daemon, the windows the coordinator planned,
 * with the node's selected workers as members. They serve the workers'
 * plans and collect their results like local windows; when complete they are
 * forwarded (link.c) instead of writing a manifest.
 */
#ifndef PD_MIRROR_H
#define PD_MIRROR_H

#include "profd/proto.h"

struct pd_daemon;

/* Reconcile the mirror windows with the node's plan from the coordinator:
 * create new windows, apply stops and late joiners, cancel windows the
 * coordinator dropped before they ended here. */
void pd_mirror_apply(struct pd_daemon *d, const pp_node_plan_t *plan);

/* The coordinator restarted: its windows are gone. Live mirrors are
 * cancelled and no mirror matches the new coordinator's window ids. */
void pd_mirror_reset(struct pd_daemon *d);

#endif
