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

typedef struct field {
    const char *name;
    size_t offset;
} field_t;

/* One field of the struct T names: F(f) inside a #define T ... #undef T. */
// clang-format off
#define F(f) {#f, offsetof(T, f)}
// clang-format on
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define T profd_options_t
static const field_t options[] = {F(url),        F(job),        F(role),         F(rank),
                                  F(local_rank), F(world_size), F(replica_rank), F(host),
                                  F(flush_ms),   F(log),        F(log_arg),      F(log_level)};
#undef T
#define T profd_capture_t
static const field_t capture[] = {
    F(window_id),    F(window),     F(job),           F(role), F(phase),   F(rank),
    F(replica_rank), F(first_step), F(last_step),     F(step), F(substep), F(part),
    F(tool),         F(mode),       F(settings_json), F(dir),  F(schedule)};
#undef T
#define T profd_schedule_t
static const field_t schedule[] = {F(skip_first), F(wait), F(warmup), F(active), F(repeat)};
#undef T
#define T profd_backend_t
static const field_t backend[] = {F(name), F(flags), F(start), F(stop), F(substep)};
#undef T
#define T profd_stats_t
static const field_t stats[] = {F(connected), F(client_id),   F(plan_gen),       F(windows),
                                F(captures),  F(events_sent), F(events_dropped), F(reconnects)};
#undef T

/* sep "name":{"size":size,"fields":{"field":offset,...}} */
static void print_struct(const char *sep, const char *name, size_t size, const field_t *f, size_t n)
{
    printf("%s\"%s\":{\"size\":%zu,\"fields\":{", sep, name, size);
    for (size_t i = 0; i < n; i++) {
        printf("%s\"%s\":%zu", i ? "," : "", f[i].name, f[i].offset);
    }
    printf("}}");
}

int main(void)
{
    printf("{");
    print_struct("", "options", sizeof(profd_options_t), options, COUNT(options));
    print_struct(",", "capture", sizeof(profd_capture_t), capture, COUNT(capture));
    print_struct(",", "schedule", sizeof(profd_schedule_t), schedule, COUNT(schedule));
    print_struct(",", "backend", sizeof(profd_backend_t), backend, COUNT(backend));
    print_struct(",", "stats", sizeof(profd_stats_t), stats, COUNT(stats));
    printf("}\n");
    return 0;
}
