// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The window table, alone: stop, lost members and nodes (the
 * coordinator's), trimming, the manifest record, the delivery estimate and
 * the table's indexes. The pure core only, through windows_fixture.c.
 * (Membership and reports: test_windows.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "manifest.h"
#include "unit_fixture.h"
#include "windows_fixture.h"

/* ---- stop ---- */

static void test_windows_stop_rules(void **state)
{
    fixture_t *f = *state;
    pd_plan_params_t p = params();
    char err[256];
    pp_selector_t s = role_sel("actor");
    /* not started: every member is before step 20 -> cancelled */
    int64_t a = create(f, 20, 29, &s, 1, PP_MODE_E2E);
    int changed = f->changed;
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, a, &p, 7000, err, sizeof(err)), 0);
    pd_window_t *wa = pd_windows_get(&f->ws, a);
    assert_int_equal(wa->state, PP_WS_CANCELLED);
    assert_string_equal(wa->reason, "cancelled before step 20");
    assert_int_equal(wa->done_ms, 7000);
    assert_int_equal(f->changed, changed + 1);
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, a, &p, 7000, err, sizeof(err)), PROFD_ESTATE);
    assert_string_equal(err, "window w1-steps20-29 is already cancelled");
    /* running from step 5, open-ended: stops at the step every member can
     * still reach (step 10, 30 ms in, 100 ms a step, 102 ms ahead: 11) */
    int64_t b = create(f, 5, 5, &s, 1, PP_MODE_E2E);
    pd_window_t *wb = pd_windows_get(&f->ws, b);
    wb->last = PP_NONE;
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, b, &p, 7000, err, sizeof(err)), 0);
    assert_int_equal(wb->state, PP_WS_PENDING);
    assert_int_equal(wb->last, 11);
    assert_int_equal(pd_windows_stop(&f->ws, &f->reg, 42, &p, 7000, err, sizeof(err)),
                     PROFD_ENOENT);
    assert_string_equal(err, "no window 42");
}

/* ---- coordinator: nodes and restarts ---- */

static void test_windows_node_gone_and_rebind(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("rollout");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    /* rollout 2 is a remote rank of node2; rollout 3 a local one */
    w->members[0].node_client = 5;
    w->members[0].node = "node2";
    pd_windows_node_gone(&f->ws, "node2", "lost with node node2 (restarted)");
    assert_int_equal(w->members[0].state, PP_MS_LOST);
    assert_string_equal(w->members[0].caps[0].reason, "lost with node node2 (restarted)");
    assert_int_equal(w->members[1].state, PP_MS_EXPECTED);
    /* a member kept over a restart (client 0) is bound to the rank that is it */
    w->members[1].client = 0;
    pd_rank_t *back = add_rank(f, "run", "rollout", 3, 1, "h3", 103);
    pd_windows_rebind(&f->ws, back);
    assert_int_equal(w->members[1].client, back->id);
}

/* A job whose ranks have all gone: its windows with nobody to wait for
 * expire with the reason, the others finish as their members are lost;
 * a follower (a node daemon) leaves its coordinator's windows alone. */
static void test_windows_job_gone(void **state)
{
    fixture_t *f = *state;
    pp_selector_t reward = role_sel("reward");
    pp_selector_t actor = role_sel("actor");
    pd_window_t *empty = pd_windows_get(&f->ws, create(f, 20, 21, &reward, 1, PP_MODE_E2E));
    pd_window_t *full = pd_windows_get(&f->ws, create(f, 20, 21, &actor, 1, PP_MODE_E2E));
    assert_int_equal(empty->nmembers, 0);
    assert_int_equal(full->nmembers, 2);
    int changed = f->changed;
    pd_windows_job_gone(&f->ws, "other", NOW / MS);
    assert_int_equal(empty->state, PP_WS_PENDING);
    pd_windows_on_lost(&f->ws, f->k[0], "left");
    pd_windows_on_lost(&f->ws, f->k[1], "left");
    pd_windows_job_gone(&f->ws, "run", NOW / MS + 5);
    assert_int_equal(empty->state, PP_WS_CANCELLED);
    assert_string_equal(empty->reason, "expired: job run has no registered rank left");
    assert_int_equal(empty->done_ms, NOW / MS + 5);
    assert_int_equal(full->state, PP_WS_GATHERING);
    assert_true(f->changed > changed);
    f->ws.follower = true;
    pd_window_t *mirror = pd_windows_get(&f->ws, create(f, 30, 31, &reward, 1, PP_MODE_E2E));
    pd_windows_job_gone(&f->ws, "run", NOW / MS + 6);
    assert_int_equal(mirror->state, PP_WS_PENDING);
}

/* Coordinator: a node that came back as a new daemon. Members whose capture
 * has not begun wait for their process to register through it again (and
 * fail when it does not in time); the others fail at once. */
static void test_windows_node_restarted(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, &s, 1, PP_MODE_E2E));
    for (int i = 0; i < 2; i++) { /* both actors are remote ranks of node2 */
        w->members[i].node_client = 10 + i;
        w->members[i].node = "node2";
        f->k[i]->node_client = 10 + i;
        f->k[i]->node = pd_registry_name(&f->reg, "node2");
    }
    f->k[1]->step = 20; /* actor 1 began the window */
    pd_windows_node_restarted(&f->ws, &f->reg, "node2", NOW / MS + 1000);
    pd_windows_on_lost(&f->ws, f->k[0], "lost with node node2 (restarted)");
    pd_windows_on_lost(&f->ws, f->k[1], "lost with node node2 (restarted)");
    pd_windows_node_gone(&f->ws, "node2", "lost with node node2 (restarted)");
    assert_int_equal(w->members[0].state, PP_MS_EXPECTED);
    assert_int_equal(w->members[1].state, PP_MS_LOST);
    /* the same process through the new node daemon: bound again */
    pp_hello_t h;
    pd_rank_t *k;
    pp_record_init(&pp_desc_hello, &h);
    h.job = "run";
    h.role = "actor";
    h.rank = 0;
    h.host = "h0";
    h.pid = 100;
    pd_registry_remove(&f->reg, f->k[0]->id);
    assert_int_equal(pd_registry_add(&f->reg, &h, "node2", 0, &k), 0);
    k->node_client = 77;
    int changed = f->changed;
    pd_windows_on_register(&f->ws, k);
    assert_int_equal(w->members[0].client, k->id);
    assert_int_equal(w->members[0].node_client, 77);
    assert_int_equal(w->members[0].rebind_until_ms, 0);
    assert_true(f->changed > changed); /* its plan changed */
    /* one that does not come back in time fails */
    pd_window_t *w2 = pd_windows_get(&f->ws, create(f, 30, 31, &s, 1, PP_MODE_E2E));
    w2->members[0].node_client = 77;
    w2->members[0].node = "node2";
    pd_windows_node_restarted(&f->ws, &f->reg, "node2", NOW / MS + 2000);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 1999);
    assert_int_equal(w2->members[0].state, PP_MS_EXPECTED);
    /* a stall of the daemon itself (5 s) moves the deadline as far */
    pd_windows_credit(&f->ws, 5000);
    assert_int_equal(w2->members[0].rebind_until_ms, NOW / MS + 7000);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 6999);
    assert_int_equal(w2->members[0].state, PP_MS_EXPECTED);
    pd_windows_rebind_expire(&f->ws, NOW / MS + 7000);
    assert_int_equal(w2->members[0].state, PP_MS_LOST);
    assert_string_equal(w2->members[0].caps[0].reason,
                        "lost with node node2 (restarted): its worker did not register again");
}

static void test_windows_trim_keeps_the_recent(void **state)
{
    fixture_t *f = *state;
    pp_selector_t s = role_sel("actor");
    for (int i = 0; i < 4; i++) {
        pd_window_t *w = pd_windows_get(&f->ws, create(f, 20 + i, 20 + i, &s, 1, PP_MODE_E2E));
        w->state = i < 3 ? PP_WS_DONE : PP_WS_ACTIVE;
    }
    pd_windows_trim(&f->ws, 1);
    assert_int_equal(f->ws.count, 2);
    assert_null(pd_windows_get(&f->ws, 1));
    assert_null(pd_windows_get(&f->ws, 2));
    assert_non_null(pd_windows_get(&f->ws, 3));
    assert_non_null(pd_windows_get(&f->ws, 4)); /* running: never trimmed */
    assert_int_equal(pd_windows_live(&f->ws), 1);
}

/* ---- the manifest record ---- */

static void test_windows_manifest_order_and_steps(void **state)
{
    fixture_t *f = *state;
    pp_selector_t sels[2] = {role_sel("actor"), role_sel("rollout")};
    pd_window_t *w = pd_windows_get(&f->ws, create(f, 20, 21, sels, 2, PP_MODE_DISCRETE));
    /* reports out of order: rollout 3, actor 1 (two steps), actor 0 */
    static const struct {
        int member;
        const char *role, *phase;
        int64_t first;
    } caps[] = {{3, "rollout", "generate", 20},
                {1, "actor", "update_actor", 21},
                {1, "actor", "update_actor", 20},
                {0, "actor", "update_actor", 20}};
    for (size_t i = 0; i < 4; i++) {
        pd_member_t *m = &w->members[caps[i].member];
        m->caps = realloc(m->caps, (m->ncaps + 1) * sizeof(*m->caps));
        pp_capture_t *c = &m->caps[m->ncaps++];
        pp_record_init(&pp_desc_capture, c);
        c->role = strdup(caps[i].role);
        c->phase = strdup(caps[i].phase);
        c->rank = m->rank;
        c->replica_rank = m->replica_rank;
        c->first_step = c->last_step = caps[i].first;
        c->status = PP_CAP_COMPLETE;
        m->state = PP_MS_REPORTED;
    }
    pp_manifest_t man;
    assert_int_equal(pd_manifest_build(w, &man), 0);
    assert_int_equal(man.version, 1);
    assert_string_equal(man.job, "run");
    assert_string_equal(man.window.name, "w1-steps20-21");
    assert_int_equal(man.window.steps_n, 2);
    assert_int_equal(man.window.steps[0], 20);
    assert_int_equal(man.window.steps[1], 22); /* half-open */
    assert_int_equal(man.window.roles_n, 2);
    assert_string_equal(man.window.roles[0], "actor");
    assert_string_equal(man.window.roles[1], "rollout");
    assert_int_equal(man.window.mode, PP_MODE_DISCRETE);
    assert_int_equal(man.captures_n, 4);
    const char *order[4][2] = {
        {"actor", "0/20"}, {"actor", "1/20"}, {"actor", "1/21"}, {"rollout", "3/20"}};
    for (size_t i = 0; i < 4; i++) {
        char got[32];
        snprintf(got, sizeof(got), "%lld/%lld", (long long)man.captures[i].rank,
                 (long long)man.captures[i].first_step);
        assert_string_equal(man.captures[i].role, order[i][0]);
        assert_string_equal(got, order[i][1]);
    }
    pd_manifest_free(&man);
    /* an open window ends after the last step a capture reached */
    w->last = PP_NONE;
    assert_int_equal(pd_manifest_build(w, &man), 0);
    assert_int_equal(man.window.steps[1], 22);
    pd_manifest_free(&man);
}

/* ---- the delivery estimate ---- */

static void test_windows_latency_p99(void **state)
{
    pd_latency_t l = {0};
    assert_int_equal(pd_latency_p99(&l), PD_LATENCY_MIN_US);
    pd_latency_sample(&l, -1);             /* ignored */
    pd_latency_sample(&l, 61 * 1000000LL); /* ignored */
    assert_int_equal(l.n, 0);
    for (int i = 1; i <= 100; i++) {
        pd_latency_sample(&l, i * 100); /* 0.1 .. 10 ms; the ring keeps the last 64 */
    }
    assert_int_equal(l.n, PD_LATENCY_SAMPLES);
    assert_int_equal(pd_latency_p99(&l), 10000); /* 3.7 .. 10 ms kept: index 63 */
    pd_latency_t small = {0};
    pd_latency_sample(&small, 500);
    assert_int_equal(pd_latency_p99(&small), PD_LATENCY_MIN_US); /* at least 2 ms */
}

/* Files arriving at a coordinator: each found by its path through the
 * index as the table grows past several rebuilds, an unknown path not
 * found, a path of PD_INCOMING_PATH_MAX bytes taken and a longer one not. */
static void test_windows_incoming_index(void **state)
{
    (void)state;
    pd_window_t *w = calloc(1, sizeof(*w));
    char path[PD_INCOMING_PATH_MAX + 2];
    size_t idx = 99;
    assert_non_null(w);
    assert_null(pd_windows_incoming(w, "none", &idx));
    for (int i = 0; i < 1000; i++) {
        snprintf(path, sizeof(path), "actor/rank%d-host%d/trace.pt.trace.json", i, i % 7);
        pd_incoming_t *in = pd_windows_add_incoming(w, path);
        assert_non_null(in);
        in->member = (size_t)i;
        if (i % 100 == 0) { /* lookups between additions grow the index in steps */
            assert_ptr_equal(pd_windows_incoming(w, path, &idx), &w->incoming[i]);
            assert_int_equal(idx, i);
        }
    }
    assert_int_equal(w->nincoming, 1000);
    for (int i = 0; i < 1000; i++) {
        snprintf(path, sizeof(path), "actor/rank%d-host%d/trace.pt.trace.json", i, i % 7);
        pd_incoming_t *in = pd_windows_incoming(w, path, &idx);
        assert_non_null(in);
        assert_int_equal(idx, i);
        assert_int_equal(in->member, i);
        assert_string_equal(in->path, path);
    }
    assert_null(pd_windows_incoming(w, "actor/rank1000-host6/trace.pt.trace.json", &idx));
    assert_null(pd_windows_incoming(w, "", &idx));
    memset(path, 'a', PD_INCOMING_PATH_MAX);
    path[PD_INCOMING_PATH_MAX] = '\0';
    assert_non_null(pd_windows_add_incoming(w, path));
    assert_non_null(pd_windows_incoming(w, path, &idx));
    assert_int_equal(idx, 1000);
    path[PD_INCOMING_PATH_MAX] = 'a';
    path[PD_INCOMING_PATH_MAX + 1] = '\0';
    assert_null(pd_windows_add_incoming(w, path));
    assert_int_equal(w->nincoming, 1001);
    pd_windows_free_one(w);
}

/* Members found by client id through the index: 3,000 of them, ids far
 * apart; members bound to new ids again and again (pd_windows_rebind's
 * case, stale entries piling up until the index is rebuilt) are found
 * under the new id only; an unknown id and 0 find nothing. */
static void test_windows_member_index(void **state)
{
    (void)state;
    pd_window_t *w = calloc(1, sizeof(*w));
    pd_rank_t k;
    pd_role_t role = {.name = "actor", .rank = 0};
    assert_non_null(w);
    pd_registry_t reg; /* the names' owner */
    pd_registry_init(&reg, 1);
    char host[16];
    memset(&k, 0, sizeof(k));
    k.role = "actor";
    k.job = k.node = k.cn = "";
    k.roles = &role;
    k.nroles = 1;
    k.uid = -1;
    k.replica_rank = PP_NONE;
    assert_null(pd_windows_member(w, 7));
    for (int i = 0; i < 3000; i++) {
        k.id = 1000003LL * (i + 1);
        k.rank = i;
        role.rank = i;
        snprintf(host, sizeof(host), "h%d", i);
        k.host = pd_registry_name(&reg, host);
        assert_non_null(pd_windows_add_member(w, &k, 0, 1));
        if (i % 500 == 0) {
            assert_ptr_equal(pd_windows_member(w, k.id), &w->members[i]);
        }
    }
    for (int i = 0; i < 3000; i++) {
        assert_ptr_equal(pd_windows_member(w, 1000003LL * (i + 1)), &w->members[i]);
    }
    assert_null(pd_windows_member(w, 1000003LL * 3001));
    assert_null(pd_windows_member(w, 0));
    /* member 5 bound to 40,000 new ids in turn: stale entries force rebuilds */
    for (int64_t id = 1; id <= 40000; id++) {
        int64_t old = w->members[5].client;
        w->members[5].client = -id;
        pd_windows_member_bound(w, 5);
        assert_ptr_equal(pd_windows_member(w, -id), &w->members[5]);
        assert_null(pd_windows_member(w, old));
    }
    assert_true(w->mix.fill * 2 <= w->mix.cap);
    assert_ptr_equal(pd_windows_member(w, 1000003LL * 7), &w->members[6]);
    assert_string_equal(w->members[2999].host, "h2999");
    pd_windows_free_one(w);
    pd_registry_fini(&reg);
}

int main(void)
{
    int plain = PD_RUN_EACH(NULL, NULL, test_windows_latency_p99, test_windows_incoming_index,
                            test_windows_member_index);
    return unit_exit2(plain,
                      PD_RUN_EACH(setup, teardown, test_windows_stop_rules,
                                  test_windows_node_gone_and_rebind, test_windows_job_gone,
                                  test_windows_node_restarted, test_windows_trim_keeps_the_recent,
                                  test_windows_manifest_order_and_steps));
}
