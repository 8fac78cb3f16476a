// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for a node daemon's journal: any bytes as
 * <save_path>/.profd-<node>.journal through pd_journal_open(). A journal of
 * any content either opens, or is refused with one line that names the
 * file (and the line, for a record) and what to do. One that opens is
 * written again (pd_journal_fini appends its head) and must open again with
 * the same windows and ranks: a start never leaves a journal the next
 * start refuses (a torn last line of any length, one byte included, is cut).
 * Files go to a private folder under /dev/shm (else /tmp).
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

static char dir[64], path[128];

static void remove_dir(void)
{
    char part[160];
    snprintf(part, sizeof(part), "%s.part", path);
    unlink(part);
    unlink(path);
    rmdir(dir);
}

static void prepare(void)
{
    if (dir[0] == '\0') {
        fuzz_tmpdir(dir, sizeof(dir), "journal", remove_dir);
        snprintf(path, sizeof(path), "%s/.profd-fz.journal", dir);
    }
}

/* A node daemon's tables alone (unit_node_t); no loop (the journal is
 * opened and closed, never started). */
typedef struct daemon {
    unit_node_t d;
    char instance[24];
    pd_journal_t *j;
    pd_journal_loaded_t loaded;
} daemon_t;

static daemon_t *daemon_open(int *rv, char *err, size_t errlen)
{
    daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        abort();
    }
    unit_node_init(&d->d, "fz", dir, 0);
    d->d.n.instance = d->instance;
    snprintf(d->instance, sizeof(d->instance), "fz-instance");
    *rv =
        pd_journal_open(&d->j, &d->d.n, d->instance, sizeof(d->instance), &d->loaded, err, errlen);
    return d;
}

static void daemon_close(daemon_t *d)
{
    pd_journal_fini(d->j); /* NULL is fine */
    unit_node_fini(&d->d);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    int rv;
    prepare();
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        abort();
    }
    daemon_t *d = daemon_open(&rv, err, sizeof(err));
    if (rv == 0) {
        size_t windows = d->loaded.windows, ranks = d->loaded.ranks;
        daemon_close(d); /* writes it again */
        err[0] = '\0';
        daemon_t *again = daemon_open(&rv, err, sizeof(err));
        if (rv != 0 || again->loaded.windows != windows || again->loaded.ranks != ranks ||
            again->loaded.torn != 0) {
            fprintf(stderr,
                    "a journal this start left does not open again (%zu/%zu windows, "
                    "%zu/%zu ranks, %zu torn): %s\n",
                    again->loaded.windows, windows, again->loaded.ranks, ranks, again->loaded.torn,
                    err);
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
