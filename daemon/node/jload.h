// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A daemon's journal read back (journal.h describes the file): the records
 * in order into the daemon's registry and window table, and, through the
 * role's hooks, its node list. Used by journal.c alone; the types are the
 * journal's interface. Loop thread, before anything serves.
 */
#ifndef PD_JLOAD_H
#define PD_JLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "node.h"

/* What one role keeps beyond a node daemon's journal (all zero: a node
 * daemon's). The node list lives above this layer: it comes through the
 * hooks. */
typedef struct pd_journal_role {
    const char *file; /* the file's name in save_path; NULL: .profd-<node>.journal */
    /* the whole-state file of an older store (a coordinator's
     * .profd-coordinator.json), read when there is no journal: the journal
     * is written from it and it is renamed <legacy>.imported; NULL none */
    const char *legacy;
    bool coordinator; /* no finished window kept; the windows' incoming files
                       * journaled; remote members restored unbound (client 0) */
    /* the node list: the i-th node (for a snapshot), false past the end ... */
    bool (*node_at)(void *arg, size_t i, const char **name, const char **instance);
    /* ... and each node the journal ends with, given back at the open */
    int (*node_restore)(void *arg, const char *name, const char *instance);
    void *arg;
} pd_journal_role_t;

/* What pd_journal_open read back. */
typedef struct pd_journal_loaded {
    bool found;            /* there was a journal (or an older store's file) */
    bool imported;         /* it was the older store's file (role.legacy) */
    size_t windows, ranks; /* restored */
    size_t lines, torn;    /* records read, torn lines ignored (0 or 1) */
    size_t nodes;          /* coordinator: node daemons awaited again */
    char coordinator[64];  /* node daemon: the coordinator instance it knew, "" */
} pd_journal_loaded_t;

typedef struct pd_jload {
    pd_node_t *n;
    pd_journal_role_t role;
    const char *path;
    char *instance; /* 24 bytes: the daemon's instance, set from the head */
} pd_jload_t;

/* Read the file at j->path into j->n (a file not there: nothing found).
 * 0, or PROFD_ECONFIG / PROFD_EIO / PROFD_ENOMEM with one line in err.
 * out->torn: a torn last line was ignored (the caller cuts it). */
int pd_jload(const pd_jload_t *j, pd_journal_loaded_t *out, char *err, size_t errlen);

#endif
