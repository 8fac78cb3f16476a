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

#include "daemon.h"
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
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "%s/profd-fuzz-state-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (mkdtemp(dir) == NULL) {
            abort();
        }
        atexit(remove_dir);
    }
}

static pd_daemon_t *daemon_new(void)
{
    pd_daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        abort();
    }
    d->cfg.coordinator = true;
    pd_log_init(&d->log, PD_LOG_ERROR - 1); /* quiet */
    pd_windows_init(&d->win);
    snprintf(d->save_path, sizeof(d->save_path), "%s", dir);
    return d;
}

static void daemon_free(pd_daemon_t *d)
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
    pd_daemon_t *d = daemon_new();
    if (pd_state_load(d, err, sizeof(err)) == 0) {
        size_t n = d->win.count;
        pd_state_fini(d); /* saves it again */
        pd_daemon_t *again = daemon_new();
        if (pd_state_load(again, err, sizeof(err)) != 0 || again->win.count != n ||
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
