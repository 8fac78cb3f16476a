// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A daemon's node state with nothing in it, as the tests of the modules
 * that save it (node/journal.c in either role, cluster/mirror.c) and the
 * journal's fuzz target need it: a quiet log, the default settings, an
 * empty registry and window table, and the pd_node_t pointing at them. No
 * loop, no sockets, no hooks; nothing here asserts (the fuzz target runs
 * without cmocka).
 */
#ifndef NODE_FIXTURE_H
#define NODE_FIXTURE_H

#include <string.h>

#include "node.h"

typedef struct unit_node {
    pd_log_t log;
    pd_config_t cfg;
    pd_registry_t reg;
    pd_windows_t ws;
    pd_node_t n;
} unit_node_t;

/* The daemon `name` saving below save_path, at most max_live windows
 * unfinished (0: no limit). */
static inline void unit_node_init(unit_node_t *d, const char *name, const char *save_path,
                                  size_t max_live)
{
    memset(&d->n, 0, sizeof(d->n));
    pd_log_init(&d->log, PD_LOG_ERROR - 1); /* quiet */
    pd_config_defaults(&d->cfg);
    pd_registry_init(&d->reg, 64);
    pd_windows_init(&d->ws, &d->log, max_live);
    d->n.cfg = &d->cfg;
    d->n.log = &d->log;
    d->n.reg = &d->reg;
    d->n.win = &d->ws;
    d->n.name = name;
    d->n.save_path = save_path;
}

/* Registers a worker of job "run" (pid 100 + rank) with the node as
 * node `node`; pd_registry_add's return code, the rank in *k. */
static inline int unit_node_add(unit_node_t *d, const char *role, int64_t rank, const char *host,
                                const char *node, pd_rank_t **k)
{
    pp_hello_t h;
    pp_record_init(&pp_desc_hello, &h);
    h.job = "run";
    h.role = (char *)role;
    h.rank = rank;
    h.host = (char *)host;
    h.pid = 100 + rank;
    return pd_registry_add(&d->reg, &h, node, 0, k);
}

static inline void unit_node_fini(unit_node_t *d)
{
    pd_windows_fini(&d->ws);
    pd_registry_fini(&d->reg);
}

#endif
