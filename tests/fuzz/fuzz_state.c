// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for a coordinator's journal (node/journal.c in the
 * coordinator's role): any bytes as <save_path>/.profd-coordinator.journal
 * through pd_journal_open_as(). A journal of any content either opens, or
 * is refused with one line that names the file and what to do. One that
 * opens is written again (pd_journal_fini) and must open again with the
 * same instance, windows and nodes, and no torn line. Files go to a
 * private folder under /dev/shm (else /tmp).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_props.h"
#include "journal.h"
#include "../unit/node_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[160];

static void remove_dir(void)
{
    char part[176];
    snprintf(part, sizeof(part), "%s.part", path);
    unlink(part);
    unlink(path);
    rmdir(dir);
}

static void prepare(void)
{
    if (dir[0] == '\0') {
        fuzz_tmpdir(dir, sizeof(dir), "state", remove_dir);
        snprintf(path, sizeof(path), "%s/" PD_COORDINATOR_JOURNAL, dir);
    }
}

/* A coordinator's tables alone (unit_node_t), no loop, no node endpoint:
 * the node list is the nodes the journal gives back. */
typedef struct daemon {
    unit_node_t d;
    char instance[24];
    char (*nodes)[2][64];
    size_t nnodes;
    pd_journal_t *j;
    pd_journal_loaded_t loaded;
} daemon_t;

static bool node_at(void *arg, size_t i, const char **name, const char **instance)
{
    daemon_t *d = arg;
    if (i >= d->nnodes) {
        return false;
    }
    *name = d->nodes[i][0];
    *instance = d->nodes[i][1];
    return true;
}

static int node_restore(void *arg, const char *name, const char *instance)
{
    daemon_t *d = arg;
    char(*n)[2][64] = realloc(d->nodes, (d->nnodes + 1) * sizeof(*n));
    if (n == NULL) {
        abort();
    }
    d->nodes = n;
    snprintf(n[d->nnodes][0], 64, "%s", name);
    snprintf(n[d->nnodes][1], 64, "%s", instance);
    d->nnodes++;
    return 0;
}

static daemon_t *daemon_open(int *rv, char *err, size_t errlen)
{
    daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        abort();
    }
    unit_node_init(&d->d, "coordinator", dir, 0);
    d->d.n.instance = d->instance;
    snprintf(d->instance, sizeof(d->instance), "fz-instance");
    const pd_journal_role_t role = {.file = PD_COORDINATOR_JOURNAL,
                                    .coordinator = true,
                                    .node_at = node_at,
                                    .node_restore = node_restore,
                                    .arg = d};
    *rv = pd_journal_open_as(&d->j, &d->d.n, &role, d->instance, sizeof(d->instance), &d->loaded,
                             err, errlen);
    return d;
}

static void daemon_close(daemon_t *d)
{
    pd_journal_fini(d->j); /* NULL is fine */
    unit_node_fini(&d->d);
    free(d->nodes);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "", instance[24];
    int rv;
    prepare();
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        abort();
    }
    daemon_t *d = daemon_open(&rv, err, sizeof(err));
    if (rv == 0) {
        size_t windows = d->d.ws.count, nodes = d->nnodes;
        snprintf(instance, sizeof(instance), "%s", d->instance);
        daemon_close(d); /* writes it again */
        err[0] = '\0';
        daemon_t *again = daemon_open(&rv, err, sizeof(err));
        if (rv != 0 || again->d.ws.count != windows || again->nnodes != nodes ||
            again->loaded.torn != 0 || strcmp(again->instance, instance) != 0) {
            fprintf(stderr,
                    "a journal this start left does not open again (%zu/%zu windows, "
                    "%zu/%zu nodes, %zu torn): %s\n",
                    again->d.ws.count, windows, again->nnodes, nodes, again->loaded.torn, err);
            abort();
        }
        daemon_close(again);
    } else {
        check_refusal(err, path);
        daemon_close(d);
    }
    unlink(path);
    return 0;
}
