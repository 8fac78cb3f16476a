// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A program built against an installed libprofd. With no daemon at
 * PROFD_URL every call must be a no-op that succeeds (fail-open).
 * Prints "ok VERSION" and exits 0, or names the first check that failed.
 */
#include <stdio.h>
#include <string.h>

#include <profd/client.h>
#include <profd/errors.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "consumer: check failed: %s\n", #cond);                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    profd_client_t *c = NULL;
    profd_stats_t st;

    CHECK(profd_open(&c, NULL) == 0);
    CHECK(c != NULL);
    for (int64_t step = 1; step <= 3; step++) {
        CHECK(profd_step_begin(c, step) == 0);
        CHECK(profd_phase_begin(c, "update_actor") == 0);
        CHECK(profd_substep(c) == 0);
        CHECK(profd_phase_end(c, "update_actor") == 0);
        CHECK(profd_step_end(c, step) == 0);
    }
    CHECK(profd_stats(c, &st) == 0);
    CHECK(!st.connected);
    CHECK(st.captures == 0);
    profd_close(c);
    CHECK(strcmp(profd_strerror(PROFD_ENODAEMON), "daemon not reachable") == 0);
    printf("ok %s\n", PROFD_VERSION_STRING);
    return 0;
}
