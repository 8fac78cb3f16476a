// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Mirror windows: on a node daemon, the windows the coordinator planned,
 * with the node's selected workers as members. They serve the workers'
 * plans and collect their results like local windows; when complete they are
 * forwarded (link.c) instead of writing a manifest. Loop thread only.
 */
#ifndef PD_MIRROR_H
#define PD_MIRROR_H

#include "node.h"
#include "profd/proto.h"

/* Reconcile the mirror windows with the node's plan from the coordinator:
 * create new windows, apply stops and late joiners, cancel windows the
 * coordinator dropped before they ended here. A worker the coordinator adds
 * to a window this node has finished already (it registered late, or again
 * as a new process) can no longer take part: it becomes a member that
 * missed the window, and late(arg, w, m) sends that result on. */
void pd_mirror_apply(pd_node_t *n, const pp_node_plan_t *plan,
                     void (*late)(void *arg, pd_window_t *w, pd_member_t *m), void *arg);

/* The coordinator restarted: its windows are gone. Running mirrors are
 * cancelled and no mirror matches the new coordinator's window ids. */
void pd_mirror_reset(pd_node_t *n);

#endif
