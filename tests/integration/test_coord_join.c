// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Where a node's ranks stand when the coordinator first hears of them. A
 * coordinator that has just restarted learns each rank from the node's
 * hello, and each rank's step from the node's next summary, up to
 * summary_ms later. A window started "next" in that gap was planned from
 * step 1, behind ranks far past it: every capture missed ("plan arrived
 * at step 325, after start step 1", a CI run of test_multinode). The
 * hello and the roster now carry each rank's step, how long ago it began
 * and its step time.
 *
 * The coordinator side: a node played by hand says hello with a rank at
 * step 325; "next 1" plans step 326, before any summary. A roster never
 * moves a rank back. The node side: a coordinator played by hand (a rep
 * socket) tells the node it does not know it after its worker has
 * stepped; the hello the node sends again carries the worker's step and
 * step time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h" /* pd_now_us: the monotonic clock the node stamps with */
#include "daemon_fixture.h"
#include "pd_skip.h"

#include <nng/protocol/reqrep0/rep.h> /* after nng.h */

#define NODE     "node1"
#define INSTANCE "0123456789abcdef"
#define HOUR_US  3600000000LL

FX_TMP_FIXTURE("profd-join")

/* A node_hello or node_roster (`type`) of NODE with `ranks` (JSON array). */
static void node_says(nng_socket s, const char *type, const char *ranks, pp_type_t want)
{
    char q[1024];
    pp_msg_t rep;
    fx_path_of(q, sizeof(q),
               "{\"v\":1,\"type\":\"%s\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE
               "\",\"ranks\":%s}",
               type, ranks);
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, want);
    pp_msg_free(&rep);
}

/* The step of job `job`'s one rank, as the coordinator's status has it. */
static int64_t step_of(const fx_daemon_t *r, const char *job)
{
    pp_msg_t rep;
    int64_t step = -1;
    assert_int_equal(fx_ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    for (size_t i = 0; i < rep.u.status_reply.ranks_n; i++) {
        if (strcmp(rep.u.status_reply.ranks[i].job, job) == 0) {
            step = rep.u.status_reply.ranks[i].step;
        }
    }
    pp_msg_free(&rep);
    return step;
}

static void test_join_next_starts_after_the_step_the_hello_gave(void **state)
{
    (void)state;
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = fx_dial(r->cfg.coordinator_listen);
    /* rank 0 of job j at step 325, begun just now, an hour a step: the
     * prediction cannot reach 327 within the test */
    char ranks[512];
    fx_path_of(ranks, sizeof(ranks),
               "[{\"client\":7,\"job\":\"j\",\"role\":\"actor\",\"rank\":0,\"host\":\"host1\","
               "\"pid\":4242,\"step\":325,\"age_us\":0,\"step_us\":%lld}]",
               HOUR_US);
    node_says(s, "node_hello", ranks, PP_T_node_welcome);
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"job\":\"j\",\"next\":1,\"tool\":\"sim\"}",
                    "w1-step326", 1);

    /* a roster listing it at an older step does not move it back; a new
     * rank of job k at step 40 stands there from the roster on */
    fx_path_of(ranks, sizeof(ranks),
               "[{\"client\":7,\"job\":\"j\",\"role\":\"actor\",\"rank\":0,\"host\":\"host1\","
               "\"pid\":4242,\"step\":10,\"step_us\":%lld},"
               "{\"client\":8,\"job\":\"k\",\"role\":\"actor\",\"rank\":0,\"host\":\"host1\","
               "\"pid\":4243,\"step\":40,\"step_us\":%lld}]",
               HOUR_US, HOUR_US);
    node_says(s, "node_roster", ranks, PP_T_ack);
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"job\":\"k\",\"next\":1,\"tool\":\"sim\"}",
                    "w2-step41", 1);
    assert_int_equal(step_of(r, "j"), 325);
    assert_int_equal(step_of(r, "k"), 40);

    /* a rank that has begun no step yet: its first step is next */
    node_says(s, "node_roster",
              "[{\"client\":7,\"job\":\"j\",\"role\":\"actor\",\"rank\":0,\"host\":\"host1\","
              "\"pid\":4242},{\"client\":8,\"job\":\"k\",\"role\":\"actor\",\"rank\":0,"
              "\"host\":\"host1\",\"pid\":4243},{\"client\":9,\"job\":\"m\",\"role\":\"actor\","
              "\"rank\":0,\"host\":\"host1\",\"pid\":4244}]",
              PP_T_ack);
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"job\":\"m\",\"next\":1,\"tool\":\"sim\"}",
                    "w3-step1", 1);
    nng_close(s);
    fx_daemon_free(r);
}

/* ---- a coordinator played by hand ---- */

/* The next request the node sends the coordinator (10 s at most). */
static void fake_recv(nng_socket c, pp_msg_t *m)
{
    char *buf;
    size_t len;
    char err[256];
    const void *payload;
    size_t plen;
    assert_int_equal(nng_recv(c, &buf, &len, NNG_FLAG_ALLOC), 0);
    size_t jl = pp_frame_split(buf, len, &payload, &plen);
    int rv = pp_msg_decode(buf, jl, 0, m, err, sizeof(err));
    if (rv != 0) {
        fail_msg("the node sent what does not decode: %s", err);
    }
    nng_free(buf, len);
}

static void fake_reply(nng_socket c, const pp_msg_t *m)
{
    char *out;
    size_t len;
    assert_int_equal(pp_msg_encode(m, &out, &len), 0);
    assert_int_equal(nng_send(c, out, len, 0), 0);
    free(out);
}

static void fake_welcome(nng_socket c)
{
    pp_msg_t w;
    pp_msg_init(&w, PP_T_node_welcome);
    w.u.node_welcome.instance = "fedcba9876543210";
    w.u.node_welcome.batches = true;
    w.u.node_welcome.files = true;
    fake_reply(c, &w);
}

static void fake_error(nng_socket c, int code, const char *text)
{
    char *out;
    size_t len;
    assert_int_equal(pp_error_encode(code, text, &out, &len), 0);
    assert_int_equal(nng_send(c, out, len, 0), 0);
    free(out);
}

static void test_join_hello_again_carries_the_step(void **state)
{
    (void)state;
    char url[512];
    nng_socket c;
    fx_path_of(url, sizeof(url), "ipc://%s/fake-coord.sock", tmp);
    assert_int_equal(nng_rep0_open(&c), 0);
    assert_int_equal(nng_socket_set_ms(c, NNG_OPT_RECVTIMEO, 10000), 0);
    assert_int_equal(nng_socket_set_ms(c, NNG_OPT_SENDTIMEO, 10000), 0);
    assert_int_equal(nng_listen(c, url, NULL, 0), 0);

    fx_daemon_t *r = fx_daemon_new(tmp);
    snprintf(r->cfg.coordinator_url, sizeof(r->cfg.coordinator_url), "%s", url);
    snprintf(r->cfg.node_name, sizeof(r->cfg.node_name), NODE);
    fx_daemon_start(r);

    /* the node joins with no worker yet */
    pp_msg_t m;
    fake_recv(c, &m);
    assert_int_equal(m.type, PP_T_node_hello);
    assert_string_equal(m.u.node_hello.node, NODE);
    assert_int_equal(m.u.node_hello.ranks_n, 0);
    pp_msg_free(&m);
    fake_welcome(c);

    /* a worker registers and begins steps 324 and 325, 0.1 s apart */
    nng_socket w = fx_dial(r->cfg.worker_url);
    pp_msg_t rep;
    assert_int_equal(fx_ask(w,
                            "{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"actor\","
                            "\"rank\":3,\"host\":\"host1\",\"pid\":4242}",
                            &rep),
                     0);
    assert_int_equal(rep.type, PP_T_welcome);
    int64_t client = rep.u.welcome.client;
    pp_msg_free(&rep);
    int64_t t0 = pd_now_us() - 100000;
    char q[256];
    fx_path_of(q, sizeof(q),
               "{\"v\":1,\"type\":\"events\",\"client\":%lld,\"ev\":[1,324,%lld,1,325,%lld]}",
               (long long)client, (long long)t0, (long long)(t0 + 100000));
    assert_int_equal(fx_ask(w, q, &rep), 0);
    pp_msg_free(&rep);

    /* the coordinator no longer knows the node: whatever it sends next is
     * answered so, and it says hello again */
    bool again = false;
    for (int i = 0; i < 50 && !again; i++) {
        fake_recv(c, &m);
        if (m.type != PP_T_node_hello) {
            pp_msg_free(&m);
            fake_error(c, PROFD_ECLIENT, "unknown node " NODE ": register again");
            continue;
        }
        again = true;
        int64_t now = pd_now_us();
        assert_int_equal(m.u.node_hello.ranks_n, 1);
        const pp_node_rank_t *k = &m.u.node_hello.ranks[0];
        assert_int_equal(k->client, client);
        assert_int_equal(k->rank, 3);
        assert_int_equal(k->step, 325);
        assert_int_equal(k->step_us, 100000);
        /* step 325 began at t0 + 0.1 s, on the node's own clock */
        assert_true(k->age_us >= 0 && k->age_us <= now - (t0 + 100000));
        pp_msg_free(&m);
        fake_welcome(c);
    }
    assert_true(again);
    nng_close(w);
    fx_daemon_free(r);
    nng_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_join_next_starts_after_the_step_the_hello_gave, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_join_hello_again_carries_the_step, setup, teardown),
    };
    return PD_RUN_TESTS(tests, NULL, NULL);
}
