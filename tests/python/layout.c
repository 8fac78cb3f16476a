// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Prints the sizes and field offsets of the public structs of client.h as
 * JSON, for test_loader.py to compare with the ctypes declarations of the
 * Python package (profd/_native.py).
 */
#include <stddef.h>
#include <stdio.h>

#include "profd/client.h"

#define FIELD(T, f) printf("%s\"%s\":%zu", first++ ? "," : "", #f, offsetof(T, f))

int main(void)
{
    int first;

    printf("{\"options\":{\"size\":%zu,\"fields\":{", sizeof(profd_options_t));
    first = 0;
    FIELD(profd_options_t, url);
    FIELD(profd_options_t, job);
    FIELD(profd_options_t, role);
    FIELD(profd_options_t, rank);
    FIELD(profd_options_t, local_rank);
    FIELD(profd_options_t, world_size);
    FIELD(profd_options_t, replica_rank);
    FIELD(profd_options_t, host);
    FIELD(profd_options_t, flush_ms);
    FIELD(profd_options_t, log);
    FIELD(profd_options_t, log_arg);
    FIELD(profd_options_t, log_level);

    printf("}},\"capture\":{\"size\":%zu,\"fields\":{", sizeof(profd_capture_t));
    first = 0;
    FIELD(profd_capture_t, window_id);
    FIELD(profd_capture_t, window);
    FIELD(profd_capture_t, job);
    FIELD(profd_capture_t, role);
    FIELD(profd_capture_t, phase);
    FIELD(profd_capture_t, rank);
    FIELD(profd_capture_t, replica_rank);
    FIELD(profd_capture_t, first_step);
    FIELD(profd_capture_t, last_step);
    FIELD(profd_capture_t, step);
    FIELD(profd_capture_t, substep);
    FIELD(profd_capture_t, part);
    FIELD(profd_capture_t, tool);
    FIELD(profd_capture_t, mode);
    FIELD(profd_capture_t, settings_json);
    FIELD(profd_capture_t, dir);
    FIELD(profd_capture_t, schedule);

    printf("}},\"schedule\":{\"size\":%zu,\"fields\":{", sizeof(profd_schedule_t));
    first = 0;
    FIELD(profd_schedule_t, skip_first);
    FIELD(profd_schedule_t, wait);
    FIELD(profd_schedule_t, warmup);
    FIELD(profd_schedule_t, active);
    FIELD(profd_schedule_t, repeat);

    printf("}},\"backend\":{\"size\":%zu,\"fields\":{", sizeof(profd_backend_t));
    first = 0;
    FIELD(profd_backend_t, name);
    FIELD(profd_backend_t, flags);
    FIELD(profd_backend_t, start);
    FIELD(profd_backend_t, stop);
    FIELD(profd_backend_t, substep);

    printf("}},\"stats\":{\"size\":%zu,\"fields\":{", sizeof(profd_stats_t));
    first = 0;
    FIELD(profd_stats_t, connected);
    FIELD(profd_stats_t, client_id);
    FIELD(profd_stats_t, plan_gen);
    FIELD(profd_stats_t, windows);
    FIELD(profd_stats_t, captures);
    FIELD(profd_stats_t, events_sent);
    FIELD(profd_stats_t, events_dropped);
    FIELD(profd_stats_t, reconnects);
    printf("}}}\n");
    return 0;
}
