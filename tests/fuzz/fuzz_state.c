// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for the coordinator's state file: any bytes as
 * <save_path>/.profd-coordinator.json through pd_state_load(). A file that
 * loads is saved again (pd_state_fini) and that file loads too, with the
 * same windows. Files go to a private folder under /dev/shm (else /tmp).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_props.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/.profd-coordinator.json", dir);
    unlink(path);
    rmdir(dir);
}

static void prepare(void)
{
    fuzz_tmpdir(dir, sizeof(dir), "state", remove_dir);
}

/* A coordinator's state alone: its window table, log and save_path, no
 * loop, no node endpoint. */
typedef struct daemon {
    pd_log_t log;
    pd_windows_t win;
    pd_node_t node;
    pd_state_t state;
    char instance[24];
} daemon_t;

static daemon_t *daemon_new(void)
{
    daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        abort();
    }
    pd_log_init(&d->log, PD_LOG_ERROR - 1); /* quiet */
    pd_windows_init(&d->win, &d->log, 0);
    d->node.log = &d->log;
    d->node.win = &d->win;
    d->node.save_path = dir;
    d->node.instance = d->instance;
    pd_state_init(&d->state, &d->node, NULL, d->instance, sizeof(d->instance));
    return d;
}

static void daemon_free(daemon_t *d)
{
    pd_windows_fini(&d->win);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], err[512];
    prepare();
    snprintf(path, sizeof(path), "%s/.profd-coordinator.json", dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        abort();
    }
    daemon_t *d = daemon_new();
    if (pd_state_load(&d->state, err, sizeof(err)) == 0) {
        size_t n = d->win.count;
        pd_state_fini(&d->state); /* saves it again */
        daemon_t *again = daemon_new();
        if (pd_state_load(&again->state, err, sizeof(err)) != 0 || again->win.count != n ||
            strcmp(again->instance, d->instance) != 0) {
            fprintf(stderr, "a saved state does not load back: %s\n", err);
            abort();
        }
        daemon_free(again);
    } else if (err[0] == '\0') {
        abort(); /* a refusal says why */
    }
    daemon_free(d);
    unlink(path);
    return 0;
}
