// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A plan broadcast to parked long polls: the daemon encodes a plan's reply
 * once and shares its bytes among the polls whose plan is the same. Twelve
 * ranks played by hand (raw hello and watch requests): roles r0..r9, r0
 * with three ranks. One window whose selectors give each role its own
 * settings: ten distinct plans, more than the broadcast keeps encoded at
 * once, so that the polls past them are encoded one by one. Every rank gets
 * its own role's plan, and the three r0 ranks the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "pd_skip.h"

#define RANKS 12
#define ROLES 10

FX_TMP_FIXTURE("profd-plans")

static int role_of(int rank)
{
    return rank < ROLES ? rank : 0;
}

static void send_watch(nng_socket s, int64_t client, int64_t gen)
{
    char q[160];
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"watch\",\"client\":%lld,\"gen\":%lld,\"hold_ms\":30000}",
             (long long)client, (long long)gen);
    assert_int_equal(nng_send(s, q, strlen(q), 0), 0);
}

static void test_plans_broadcast_shares_equal_plans(void **state)
{
    (void)state;
    fx_daemon_t *r = fx_daemon_new(tmp);
    fx_daemon_start(r);
    nng_socket s[RANKS];
    int64_t client[RANKS], gen[RANKS];
    for (int i = 0; i < RANKS; i++) {
        char q[256];
        pp_msg_t rep;
        s[i] = fx_dial(r->cfg.worker_url);
        snprintf(q, sizeof(q),
                 "{\"v\":1,\"type\":\"hello\",\"job\":\"plans\",\"role\":\"r%d\",\"rank\":%d,"
                 "\"host\":\"h1\",\"pid\":%d}",
                 role_of(i), i, (int)getpid());
        assert_int_equal(fx_ask(s[i], q, &rep), 0);
        assert_int_equal(rep.type, PP_T_welcome);
        client[i] = rep.u.welcome.client;
        gen[i] = rep.u.welcome.gen;
        pp_msg_free(&rep);
    }
    for (int i = 0; i < RANKS; i++) {
        send_watch(s[i], client[i], gen[i]);
    }
    char q[2048];
    int k = snprintf(q, sizeof(q),
                     "{\"v\":1,\"type\":\"start\",\"job\":\"plans\",\"steps\":[1000],"
                     "\"tool\":\"sim\",\"selectors\":[");
    for (int j = 0; j < ROLES; j++) {
        k += snprintf(q + k, sizeof(q) - (size_t)k,
                      "%s{\"role\":\"r%d\",\"all_ranks\":true,\"settings\":{\"k\":%d}}",
                      j ? "," : "", j, j);
    }
    snprintf(q + k, sizeof(q) - (size_t)k, "]}");
    int64_t id = fx_start_window(r->cfg.control_url, q, "w1-step1000", RANKS);

    char *text[RANKS];
    for (int i = 0; i < RANKS; i++) {
        for (;;) { /* past any plan without the window (registrations, the latency probe) */
            char *buf;
            size_t len;
            pp_msg_t rep;
            char err[256];
            assert_int_equal(nng_recv(s[i], &buf, &len, NNG_FLAG_ALLOC), 0);
            assert_int_equal(pp_msg_decode(buf, len, 0, &rep, err, sizeof(err)), 0);
            assert_int_equal(rep.type, PP_T_plan);
            if (rep.u.plan.entries_n == 0) {
                send_watch(s[i], client[i], rep.u.plan.gen);
                pp_msg_free(&rep);
                nng_free(buf, len);
                continue;
            }
            char want[32];
            snprintf(want, sizeof(want), "{\"k\":%d}", role_of(i));
            assert_false(rep.u.plan.unchanged);
            assert_int_equal(rep.u.plan.entries_n, 1);
            const pp_plan_entry_t *e = &rep.u.plan.entries[0];
            assert_int_equal(e->window, id);
            assert_string_equal(e->name, "w1-step1000");
            assert_string_equal(e->job, "plans");
            assert_int_equal(e->first_step, 1000);
            assert_int_equal(e->last_step, 1000);
            assert_string_equal(e->tool, "sim");
            assert_string_equal(e->settings, want);
            assert_int_equal(e->roles_n, 0); /* one role: every role of the rank */
            text[i] = calloc(1, len + 1);
            assert_non_null(text[i]);
            memcpy(text[i], buf, len);
            pp_msg_free(&rep);
            nng_free(buf, len);
            break;
        }
    }
    /* the same plan, the same bytes; another role's, other bytes */
    assert_string_equal(text[10], text[0]);
    assert_string_equal(text[11], text[0]);
    for (int i = 1; i < ROLES; i++) {
        assert_string_not_equal(text[i], text[0]);
    }
    for (int i = 0; i < RANKS; i++) {
        free(text[i]);
        nng_close(s[i]);
    }
    fx_daemon_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plans_broadcast_shares_equal_plans, setup, teardown),
    };
    return PD_RUN_TESTS(tests, NULL, NULL);
}
