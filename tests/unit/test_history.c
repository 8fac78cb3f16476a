// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Step-time history, the straggler detector, steps.json and report.html:
 * the pure core, by tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"
#include "reporthtml.h"
#include "stepdoc.h"
#include "window_one.h"
#include "straggler.h"
#include "wrecord.h"

static pd_hist_id_t id_of(const char *role, int64_t rank)
{
    pd_hist_id_t id = {"run", role, "node1", NULL, rank, PP_NONE, 100 + rank};
    return id;
}

static pd_hist_rank_t *rank_with(pd_history_t *h, const char *role, int64_t rank, const int64_t *ms,
                                 size_t n, int64_t first)
{
    pd_hist_id_t id = id_of(role, rank);
    pd_hist_rank_t *r = pd_history_get(h, &id, 0);
    for (size_t i = 0; i < n; i++) {
        pd_history_put(h, r, first + (int64_t)i, ms[i] * 1000);
    }
    return r;
}

/* ---- events ---- */

typedef struct ev_case {
    const char *what;
    int64_t ev[24];
    size_t nev;
    int recorded;
    int64_t step_us[4]; /* steps 1..4, -1 unknown */
    int64_t cur_step;
    bool in_step;
} ev_case_t;

static const ev_case_t ev_cases[] = {
    {"begin and end", {1, 1, 1000, 2, 1, 51000}, 6, 1, {50000, -1, -1, -1}, 1, false},
    {"two steps",
     {1, 1, 0, 2, 1, 40000, 1, 2, 50000, 2, 2, 110000},
     12,
     2,
     {40000, 60000, -1, -1},
     2,
     false},
    {"no end: begin to begin",
     {1, 1, 0, 1, 2, 30000, 1, 3, 70000},
     9,
     2,
     {30000, 40000, -1, -1},
     3,
     true},
    {"a skipped step: begin to begin over two",
     {1, 1, 0, 1, 3, 100000},
     6,
     1,
     {50000, -1, -1, -1},
     3,
     true},
    {"end of another step ignored",
     {1, 2, 0, 2, 1, 10000, 2, 2, 20000},
     9,
     1,
     {-1, 20000, -1, -1},
     2,
     false},
    {"an older begin does not go back", {1, 3, 0, 1, 2, 10}, 6, 0, {-1, -1, -1, -1}, 3, true},
    {"unknown kinds are skipped",
     {7, 1, 0, 1, 1, 0, 2, 1, 5000},
     9,
     1,
     {5000, -1, -1, -1},
     1,
     false},
    {"a partial triple is ignored", {1, 1, 0, 2, 1}, 5, 0, {-1, -1, -1, -1}, 1, true},
};

static void test_history_events_table(void **state)
{
    for (size_t c = 0; c < sizeof(ev_cases) / sizeof(ev_cases[0]); c++) {
        const ev_case_t *t = &ev_cases[c];
        pd_history_t h;
        pd_history_init(&h, 16, 4, 8);
        pd_hist_id_t id = id_of("actor", 0);
        pd_hist_rank_t *r = pd_history_get(&h, &id, 5);
        assert_non_null(r);
        int n = pd_history_events(&h, r, t->ev, t->nev, NULL, 0, NULL, 0, 9);
        if (n != t->recorded) {
            fail_msg("%s: recorded %d, expected %d", t->what, n, t->recorded);
        }
        for (int s = 1; s <= 4; s++) {
            if (pd_history_step_us(&h, r, s) != t->step_us[s - 1]) {
                fail_msg("%s: step %d: %lld, expected %lld", t->what, s,
                         (long long)pd_history_step_us(&h, r, s), (long long)t->step_us[s - 1]);
            }
        }
        assert_int_equal(r->now->cur_step, t->cur_step);
        assert_int_equal(r->now->in_step, t->in_step);
        assert_int_equal(r->seen_ms, 9);
        pd_history_fini(&h);
    }
}

static void test_history_ring_keeps_the_newest_steps(void **state)
{
    pd_history_t h;
    pd_history_init(&h, 4, 2, 8);
    pd_hist_id_t id = id_of("actor", 0);
    pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
    for (int s = 1; s <= 6; s++) {
        pd_history_put(&h, r, s, s * 1000);
    }
    assert_int_equal(pd_history_first(&h, r), 3);
    assert_int_equal(pd_history_step_us(&h, r, 2), -1); /* out of the ring */
    assert_int_equal(pd_history_step_us(&h, r, 3), 3000);
    assert_int_equal(pd_history_step_us(&h, r, 6), 6000);
    assert_int_equal(pd_history_step_us(&h, r, 7), -1);
    /* a jump clears the slots it skips: nothing of steps 3..6 reappears */
    pd_history_put(&h, r, 9, 9000);
    assert_int_equal(pd_history_step_us(&h, r, 6), 6000);
    assert_int_equal(pd_history_step_us(&h, r, 7), -1);
    assert_int_equal(pd_history_step_us(&h, r, 8), -1);
    assert_int_equal(pd_history_step_us(&h, r, 9), 9000);
    assert_int_equal(pd_history_step_us(&h, r, 5), -1);
    pd_history_put(&h, r, 100, 1);
    for (int s = 97; s < 100; s++) {
        assert_int_equal(pd_history_step_us(&h, r, s), -1);
    }
    /* too old: dropped */
    pd_history_put(&h, r, 50, 5000);
    assert_int_equal(pd_history_step_us(&h, r, 50), -1);
    /* 0 us is kept as 1 (0 marks unknown); more than 71 minutes saturates */
    assert_int_equal(pd_history_step_us(&h, r, 100), 1);
    pd_history_put(&h, r, 101, 5000000000LL);
    assert_int_equal(pd_history_step_us(&h, r, 101), 4294967295LL);
    /* the median of the last n known */
    pd_history_put(&h, r, 102, 10);
    pd_history_put(&h, r, 103, 30);
    assert_int_equal(pd_history_median(&h, r, PP_NONE, 3), 30);
    assert_int_equal(pd_history_median(&h, r, 102, 1), 10);
    assert_int_equal(pd_history_median(&h, r, 102, 2), 4294967295LL); /* the upper of two */
    pd_history_fini(&h);
}

static void test_history_phases(void **state)
{
    pd_history_t h;
    char *names[] = {"generate", "update_actor", "bad name"};
    pd_history_init(&h, 8, 4, 8);
    pd_hist_id_t id = id_of("actor", 0);
    pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
    /* step 1: generate 10 ms, update 5 ms, generate again 2 ms; step 2:
     * generate left open, closed by the step's end */
    const int64_t ev[] = {1, 1, 0, 2, 1, 20000, 1, 2, 30000, 2, 2, 50000};
    const int64_t pev[] = {1, 0, 1000,  2, 0, 11000, 1, 1, 11000, 2, 1, 16000,
                           1, 0, 16000, 2, 0, 18000, 1, 2, 18500, 1, 0, 31000};
    pd_history_events(&h, r, ev, 12, pev, 24, names, 3, 0);
    assert_int_equal(r->nphases, 2);
    assert_string_equal(r->phases[0], "generate");
    assert_string_equal(r->phases[1], "update_actor");
    assert_int_equal(pd_history_phase_us(&h, r, 0, 1), 12000);
    assert_int_equal(pd_history_phase_us(&h, r, 1, 1), 5000);
    assert_int_equal(pd_history_phase_us(&h, r, 0, 2), 19000);
    assert_int_equal(pd_history_phase_us(&h, r, 1, 2), -1);
    assert_int_equal(pd_history_step_us(&h, r, 1), 20000);
    assert_int_equal(pd_history_step_us(&h, r, 2), 20000);
    /* a name index out of range, and more names than kept */
    const int64_t bad[] = {1, 9, 51000, 1, -1, 52000};
    pd_history_events(&h, r, NULL, 0, bad, 6, names, 3, 0);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        pd_history_put_phase(&h, r, 2, name, 1000);
    }
    assert_int_equal(r->nphases, PD_HIST_PHASES);
    assert_int_equal(r->phases_dropped, 4);
    /* names kept once: another rank's phase and identity point to the
     * same copies */
    pd_hist_id_t id1 = id_of("actor", 1);
    pd_hist_rank_t *r1 = pd_history_get(&h, &id1, 0);
    pd_history_put_phase(&h, r1, 2, "update_actor", 1000);
    assert_ptr_equal(r1->phases[0], r->phases[1]);
    assert_ptr_equal(r1->job, r->job);
    assert_ptr_equal(r1->role, r->role);
    assert_ptr_equal(r1->host, r->host);
    assert_int_equal(pd_history_phase_us(&h, r1, 0, 2), 1000);
    pd_history_fini(&h);
}

static void test_history_evicts_the_least_recent(void **state)
{
    pd_history_t h;
    pd_history_init(&h, 4, 2, 3);
    for (int i = 0; i < 3; i++) {
        pd_hist_id_t id = id_of("actor", i);
        assert_non_null(pd_history_get(&h, &id, 100 + i));
    }
    pd_hist_id_t id1 = id_of("actor", 1);
    pd_history_find(&h, &id1)->gone = true; /* gone: goes first */
    pd_hist_id_t id3 = id_of("actor", 3);
    assert_non_null(pd_history_get(&h, &id3, 200));
    assert_int_equal(h.n, 3);
    assert_int_equal(h.evicted, 1);
    assert_null(pd_history_find(&h, &id1));
    pd_hist_id_t id0 = id_of("actor", 0);
    assert_non_null(pd_history_find(&h, &id0));
    pd_hist_id_t id4 = id_of("actor", 4);
    assert_non_null(pd_history_get(&h, &id4, 300)); /* then the oldest seen: rank 0 */
    assert_null(pd_history_find(&h, &id0));
    assert_non_null(pd_history_find(&h, &id3));
    /* the same key from another node is another rank */
    pd_hist_id_t other = id_of("actor", 3);
    other.node = "node7";
    assert_null(pd_history_find(&h, &other));
    /* bad names are refused */
    pd_hist_id_t bad = id_of("act or", 3);
    assert_null(pd_history_get(&h, &bad, 0));
    pd_history_fini(&h);
}

static void test_history_stats(void **state)
{
    pd_history_t h;
    pd_history_init(&h, 16, 4, 16);
    const int64_t a0[] = {100, 100, 100}, a1[] = {110, 110, 110}, a2[] = {400, 400, 400};
    const int64_t r0[] = {50, 50};
    pd_hist_rank_t *x = rank_with(&h, "actor", 2, a2, 3, 1);
    rank_with(&h, "actor", 0, a0, 3, 1);
    rank_with(&h, "actor", 1, a1, 3, 1);
    pd_hist_rank_t *y = rank_with(&h, "rollout", 3, r0, 2, 1);
    pd_history_where(x, 4, true, 0, 1000);
    pd_history_where(y, 3, true, 5000, 10000); /* in step 3 for 5 s: stalled */
    pp_role_stats_t *rs;
    pp_rank_stat_t *rk;
    size_t nr, nk;
    assert_int_equal(pd_history_stats(&h, NULL, 10000, 2, true, &rs, &nr, &rk, &nk), 0);
    assert_int_equal(nr, 2);
    assert_int_equal(nk, 4);
    assert_string_equal(rs[0].role, "actor");
    assert_int_equal(rs[0].ranks, 3);
    assert_int_equal(rs[0].step, 4);
    assert_true(rs[0].min_ms == 100.0 && rs[0].p50_ms == 110.0 && rs[0].max_ms == 400.0);
    assert_int_equal(rs[0].slowest_n, 2);
    assert_int_equal(rs[0].slowest[0].rank, 2);
    assert_true(rs[0].slowest[0].ratio > 3.63 && rs[0].slowest[0].ratio < 3.64);
    assert_int_equal(rs[0].slowest[1].rank, 1);
    /* rank 2 began step 4 at 1000 and it is 10000: 9 s > 4 x 110 ms */
    assert_int_equal(rs[0].stalled_n, 1);
    assert_int_equal(rs[0].stalled[0].rank, 2);
    assert_string_equal(rs[1].role, "rollout");
    assert_int_equal(rs[1].stalled_n, 1);
    assert_int_equal(rs[1].stalled[0].rank, 3);
    assert_true(rs[1].stalled[0].in_step_ms == 5000.0);
    /* every rank, in role and rank order */
    assert_int_equal(rk[0].rank, 0);
    assert_int_equal(rk[2].rank, 2);
    assert_true(rk[2].stalled);
    assert_string_equal(rk[3].role, "rollout");
    pd_history_stats_free(rs, nr, rk);
    /* a rank that left (said goodbye) is out of the figures, and so is a lost
     * one (its process gone: its connection closed, or silent past the
     * client timeout), not stalled for ever (it was: an alert on the stalled
     * gauge never cleared) */
    pd_hist_id_t rid = id_of("rollout", 3);
    pd_history_find(&h, &rid)->gone = pd_history_find(&h, &rid)->left = true;
    pd_hist_id_t aid = id_of("actor", 0);
    pd_history_find(&h, &aid)->gone = true;
    assert_int_equal(pd_history_stats(&h, NULL, 10000, 2, true, &rs, &nr, &rk, &nk), 0);
    assert_int_equal(nr, 1);
    assert_int_equal(rs[0].ranks, 2);
    assert_int_equal(rs[0].stalled_n, 1);
    assert_int_equal(rs[0].stalled[0].rank, 2); /* in its step too long: stalled */
    assert_int_equal(nk, 2);
    assert_int_equal(rk[0].rank, 1);
    assert_int_equal(rk[1].rank, 2);
    pd_history_stats_free(rs, nr, rk);
    /* one job only; a job nobody runs */
    assert_int_equal(pd_history_stats(&h, "other", 0, 2, false, &rs, &nr, NULL, NULL), 0);
    assert_int_equal(nr, 0);
    pd_history_stats_free(rs, nr, NULL);
    pd_history_fini(&h);
}

/* ---- the straggler detector ---- */

typedef struct strag_case {
    const char *what;
    double factor;
    int64_t consecutive;
    int nranks;
    int64_t ms[4][6];   /* steps 1..6 of ranks 0..3 */
    int64_t slow, peer; /* -1: no hit */
} strag_case_t;

static const strag_case_t strag_cases[] = {
    {"one slow rank for 3 steps",
     2.0,
     3,
     4,
     {{50, 50, 50, 50, 50, 50},
      {50, 50, 50, 210, 220, 230},
      {52, 52, 52, 52, 52, 52},
      {48, 48, 48, 48, 48, 48}},
     1,
     0},
    {"slow for 2 steps only",
     2.0,
     3,
     4,
     {{50, 50, 50, 50, 50, 50},
      {50, 50, 50, 50, 220, 230},
      {50, 50, 50, 50, 50, 50},
      {50, 50, 50, 50, 50, 50}},
     -1,
     -1},
    {"just under the factor",
     2.0,
     2,
     3,
     {{50, 50, 50, 50, 50, 50}, {100, 100, 100, 100, 100, 100}, {50, 50, 50, 50, 50, 50}},
     -1,
     -1},
    {"two ranks: the median of the other one",
     1.5,
     3,
     2,
     {{50, 50, 50, 50, 50, 50}, {90, 90, 90, 90, 90, 90}},
     1,
     0},
    {"a single rank has no peer", 1.5, 1, 1, {{500, 500, 500, 500, 500, 500}}, -1, -1},
    {"a gap in the run",
     2.0,
     3,
     3,
     {{50, 50, 50, 50, 50, 50}, {50, 300, 300, 0, 300, 300}, {50, 50, 50, 50, 50, 50}},
     -1,
     -1},
    {"the worst of two stragglers, peer closest to the median",
     2.0,
     2,
     4,
     {{50, 50, 50, 50, 50, 50},
      {50, 50, 50, 50, 400, 400},
      {50, 50, 50, 50, 200, 200},
      {60, 60, 60, 60, 60, 60}},
     1,
     0},
    /* guards: another straggler taken as the healthy peer. Rank 0 turned
     * slow two steps ago: its recent step time (a median) is still the
     * role's, so it is the closest to the median and sorts first; it is a
     * straggler all the same, and the peer is rank 2. */
    {"the peer is never another straggler",
     2.0,
     2,
     4,
     {{50, 50, 50, 50, 200, 200},
      {50, 50, 50, 50, 400, 400},
      {50, 50, 50, 50, 50, 50},
      {60, 60, 60, 60, 60, 60}},
     1,
     2},
};

static void fill(pd_history_t *h, const strag_case_t *t, const char *role)
{
    for (int k = 0; k < t->nranks; k++) {
        pd_hist_id_t id = id_of(role, k);
        pd_hist_rank_t *r = pd_history_get(h, &id, 0);
        for (int s = 0; s < 6; s++) {
            if (t->ms[k][s] > 0) {
                pd_history_put(h, r, s + 1, t->ms[k][s] * 1000);
            }
        }
    }
}

static pd_straggler_cfg_t cfg_of(double factor, int64_t consecutive)
{
    pd_straggler_cfg_t c;
    memset(&c, 0, sizeof(c));
    c.factor = factor;
    c.consecutive = consecutive;
    c.steps = 2;
    c.interval_ms = 1000;
    snprintf(c.tool, sizeof(c.tool), "sim");
    return c;
}

static void test_straggler_table(void **state)
{
    for (size_t c = 0; c < sizeof(strag_cases) / sizeof(strag_cases[0]); c++) {
        const strag_case_t *t = &strag_cases[c];
        pd_history_t h;
        pd_straggler_t s;
        pd_straggler_hit_t hit;
        pd_history_init(&h, 16, 4, 16);
        fill(&h, t, "actor");
        pd_straggler_cfg_t cfg = cfg_of(t->factor, t->consecutive);
        pd_straggler_init(&s, &cfg, true);
        bool got = pd_straggler_check(&s, &h, 0, &hit);
        if (got != (t->slow >= 0)) {
            fail_msg("%s: hit %d, expected %d", t->what, got, t->slow >= 0);
        }
        if (got && (hit.slow->rank != t->slow || hit.peer->rank != t->peer)) {
            fail_msg("%s: slow %lld peer %lld, expected %lld %lld", t->what,
                     (long long)hit.slow->rank, (long long)hit.peer->rank, (long long)t->slow,
                     (long long)t->peer);
        }
        pd_history_fini(&h);
    }
}

static void test_straggler_rate_limit_budget_and_roles(void **state)
{
    pd_history_t h;
    pd_straggler_t s;
    pd_straggler_hit_t hit;
    pd_history_init(&h, 16, 4, 16);
    fill(&h, &strag_cases[0], "actor");
    pd_straggler_cfg_t cfg = cfg_of(2.0, 3);
    cfg.max_bytes = 1000;
    pd_straggler_init(&s, &cfg, false);
    assert_false(pd_straggler_check(&s, &h, 0, &hit)); /* disarmed */
    pd_straggler_arm(&s, &cfg);
    assert_true(pd_straggler_check(&s, &h, 0, &hit));
    assert_string_equal(hit.reason,
                        "straggler trigger: rank 1 (actor) took at least 210.0 ms per step for 3 "
                        "step(s), over 2.00 x the median of the role's other ranks (50.0 ms); "
                        "healthy peer rank 0 (50.0 ms)");
    pd_straggler_fired(&s, &hit, 7, 100);
    assert_int_equal(s.fired, 1);
    /* its window runs: nothing; over: the interval still holds */
    assert_false(pd_straggler_check(&s, &h, 5000, &hit));
    pd_straggler_window_done(&s, 8, 10); /* another window */
    assert_false(pd_straggler_check(&s, &h, 5000, &hit));
    pd_straggler_window_done(&s, 7, 600);
    assert_int_equal(s.bytes, 600);
    assert_false(pd_straggler_check(&s, &h, 1099, &hit));
    assert_true(pd_straggler_check(&s, &h, 1100, &hit));
    pd_straggler_fired(&s, &hit, 9, 1100);
    pd_straggler_window_done(&s, 9, 400); /* 1000 bytes: the budget is spent */
    assert_false(pd_straggler_check(&s, &h, 100000, &hit));
    /* a failed attempt counts against the rate limit, not as a window */
    pd_straggler_arm(&s, &cfg);
    assert_true(pd_straggler_check(&s, &h, 0, &hit));
    pd_straggler_fired(&s, &hit, PP_NONE, 0);
    assert_int_equal(s.fired, 0);
    assert_false(pd_straggler_check(&s, &h, 999, &hit));
    assert_true(pd_straggler_check(&s, &h, 1000, &hit));
    /* other roles and jobs are not watched */
    cfg.nroles = 1;
    snprintf(cfg.roles[0], sizeof(cfg.roles[0]), "rollout");
    pd_straggler_arm(&s, &cfg);
    assert_false(pd_straggler_check(&s, &h, 0, &hit));
    cfg.nroles = 0;
    snprintf(cfg.job, sizeof(cfg.job), "other");
    pd_straggler_arm(&s, &cfg);
    assert_false(pd_straggler_check(&s, &h, 0, &hit));
    /* a gone rank is no peer and no straggler */
    cfg.job[0] = '\0';
    pd_straggler_arm(&s, &cfg);
    pd_hist_id_t id1 = id_of("actor", 1);
    pd_history_find(&h, &id1)->gone = true;
    assert_false(pd_straggler_check(&s, &h, 0, &hit));
    pp_straggler_t info;
    pd_straggler_info(&s, &info);
    assert_true(info.armed && info.factor == 2.0 && info.consecutive == 3 && info.steps == 2);
    assert_string_equal(info.tool, "sim");
    assert_null(info.job);
    free(info.roles);
    pd_history_fini(&h);
}

/* ---- steps.json and report.html ---- */

static void test_stepdoc_and_report(void **state)
{
    pd_history_t h;
    pd_history_init(&h, 64, 16, 16);
    /* actor 0, 1, 2 over steps 1..20; rank 2 slow in steps 10..12 */
    for (int k = 0; k < 3; k++) {
        pd_hist_id_t id = id_of("actor", k);
        pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
        for (int s = 1; s <= 20; s++) {
            pd_history_put(&h, r, s, (k == 2 && s >= 10 && s <= 12 ? 300 : 100) * 1000);
            pd_history_put_phase(&h, r, s, "update_actor", 60000);
        }
        r->offset_us = k;
        r->offset_err_us = 20;
    }
    pd_hist_id_t oj = {"otherjob", "actor", "node1", NULL, 9, PP_NONE, 1};
    pd_history_put(&h, pd_history_get(&h, &oj, 0), 10, 1000);

    pd_member_t members[3];
    memset(members, 0, sizeof(members));
    pp_capture_t caps[3];
    for (int k = 0; k < 3; k++) {
        int64_t rank = k == 2 ? 5 : k; /* rank 5: a member without times */
        members[k].role = "actor";
        members[k].host = "node1";
        members[k].node = "";
        members[k].rank = rank;
        members[k].replica_rank = PP_NONE;
        pp_record_init(&pp_desc_capture, &caps[k]);
        caps[k].role = "e2e";
        caps[k].rank = rank;
        caps[k].host = "node1";
        caps[k].first_step = 10;
        caps[k].last_step = 11;
        caps[k].status = k == 1 ? PP_CAP_FAILED : PP_CAP_COMPLETE;
        caps[k].reason = k == 1 ? "sim: <disk> full & \"gone\"" : NULL;
        members[k].caps = &caps[k];
        members[k].ncaps = 1;
    }
    pd_window_t w;
    memset(&w, 0, sizeof(w));
    w.id = 4;
    snprintf(w.name, sizeof(w.name), "w4-steps10-11");
    snprintf(w.job, sizeof(w.job), "run");
    pp_record_init(&pp_desc_window_spec, &w.spec);
    w.spec.source = "profctl start";
    w.first = 10;
    w.last = 11;
    w.members = members;
    w.nmembers = 3;

    pp_steps_doc_t d;
    assert_int_equal(pd_stepdoc_build(&w, &h, "node1", &d), 0);
    assert_int_equal(d.version, 1);
    assert_int_equal(d.window[0], 10);
    assert_int_equal(d.window[1], 12);
    assert_int_equal(d.steps[0], 2); /* 8 steps of context either side */
    assert_int_equal(d.steps[1], 19);
    assert_int_equal(d.ranks_n, 4); /* ranks 0, 1, 2 with times, member 5 without */
    assert_int_equal(d.roles_n, 1);
    assert_int_equal(d.roles[0].ranks, 4);
    assert_int_equal(d.ranks[2].rank, 2);
    assert_false(d.ranks[2].member);
    assert_int_equal(d.ranks[2].step_us_n, 18);
    assert_int_equal(d.ranks[2].step_us[10 - 2], 300000);
    assert_true(d.ranks[2].median_ms == 300.0);
    assert_true(d.ranks[2].ratio == 3.0);
    assert_int_equal(d.ranks[2].offset_us, 2);
    assert_int_equal(d.ranks[2].offset_err_us, 20);
    assert_int_equal(d.ranks[3].rank, 5);
    assert_true(d.ranks[3].member);
    assert_int_equal(d.ranks[3].step_us[0], -1);
    assert_int_equal(d.roles[0].p50_us[10 - 2], 100000);
    assert_string_equal(d.roles[0].phases[0], "update_actor");
    assert_int_equal(d.roles[0].phase_p50_us[0], 60000);
    assert_int_equal(d.ranks[0].phase_us_n, 18);
    assert_int_equal(d.ranks[0].phase_us[0], -1); /* step 2: older than the phase ring */
    assert_int_equal(d.ranks[0].phase_us[10 - 2], 60000);
    /* issue 30: the ranks' names and arrays are one allocation, each
     * distinct name once (a strdup per name and an allocation per array had
     * been 3.5 MB at 16,384 ranks) */
    for (size_t i = 0; i + 1 < d.ranks_n; i++) {
        assert_ptr_equal(d.ranks[i + 1].role, d.ranks[0].role);
        assert_ptr_equal(d.ranks[i + 1].host, d.ranks[0].host);
        assert_ptr_equal(d.ranks[i + 1].step_us, d.ranks[i].step_us + d.ranks[i].step_us_n +
                                                     d.ranks[i].section_us_n +
                                                     d.ranks[i].phase_us_n);
    }
    assert_ptr_equal(d.ranks[0].phase_us, d.ranks[0].step_us + 18); /* no sections */
    assert_string_equal(d.ranks[3].role, "actor");
    assert_string_equal(d.ranks[3].host, "node1");
    /* it round-trips through the codec */
    char *text;
    size_t len;
    assert_int_equal(pp_record_encode(&pp_desc_steps_doc, &d, true, &text, &len), 0);
    pp_steps_doc_t back;
    assert_int_equal(pp_record_decode(&pp_desc_steps_doc, text, len, &back, NULL, 0), 0);
    assert_int_equal(back.ranks_n, 4);
    assert_int_equal(back.ranks[2].step_us[8], 300000);
    pp_record_free(&pp_desc_steps_doc, &back);
    free(text);

    pp_manifest_t man;
    pp_record_init(&pp_desc_manifest, &man);
    man.version = 1;
    man.job = "run";
    man.window.id = 4;
    man.window.name = "w4-steps10-11";
    int64_t steps[2] = {10, 12};
    man.window.steps = steps;
    man.window.steps_n = 2;
    man.window.tool = "sim";
    man.window.mode = PP_MODE_E2E;
    man.window.source = "straggler trigger: <rank 2>";
    man.captures = caps;
    man.captures_n = 3;
    assert_int_equal(pd_report_html(&d, &man, "1.0", &text, &len), 0);
    assert_int_equal(strlen(text), len);
    /* a heatmap cell per rank and step */
    for (int k = 0; k < 4; k++) {
        int64_t rank = k == 3 ? 5 : k;
        size_t cells = 0;
        char needle[64];
        snprintf(needle, sizeof(needle), "class=\"cell\" data-rank=\"%lld\" ", (long long)rank);
        for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) {
            cells++;
        }
        assert_int_equal(cells, 18);
    }
    static const char *const shown[] = {
        "id=\"window-frame\"", "sim: &lt;disk&gt; full &amp; &quot;gone&quot;",
        "straggler trigger: &lt;rank 2&gt;", "<td class=\"st-failed\">failed</td>", "update_actor"};
    /* nothing is fetched: no source, link, stylesheet or script */
    static const char *const fetched[] = {"src=", "href=", "url(", "<script", "<link"};
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        assert_non_null(strstr(text, shown[i]));
    }
    for (size_t i = 0; i < sizeof(fetched) / sizeof(fetched[0]); i++) {
        assert_null(strstr(text, fetched[i]));
    }
    free(text);
    pd_stepdoc_free(&d);
    pd_history_fini(&h);
}

/* Many ranks on several hosts, rank numbers repeated across hosts: each
 * history rank is matched to the member of the same role, rank, host and
 * node (not merely the same rank number), a member with no history gets a
 * row of its own, and every rank appears once. */
static void test_stepdoc_matches_members_by_identity(void **state)
{
    (void)state;
    enum { HOSTS = 3, RANKS = 100, EXTRA = 10 };
    char hosts[HOSTS][16];
    pd_history_t h;
    pd_history_init(&h, 16, 4, HOSTS * RANKS);
    for (int hh = 0; hh < HOSTS; hh++) {
        snprintf(hosts[hh], sizeof(hosts[hh]), "host%d", hh);
        for (int r = 0; r < RANKS; r++) {
            pd_hist_id_t id = {"run", "actor", hosts[hh], hosts[hh], r, PP_NONE, 1};
            pd_history_put(&h, pd_history_get(&h, &id, 0), 10, (1000 + 10 * hh + r) * 1000);
        }
    }
    /* members: the ranks r % 3 != 0 of every host (200), then EXTRA with
     * no history (ranks 1000..) on host0 */
    pd_member_t members[HOSTS * RANKS + EXTRA];
    size_t nm = 0;
    memset(members, 0, sizeof(members));
    for (int hh = 0; hh < HOSTS; hh++) {
        for (int r = 0; r < RANKS; r++) {
            if (r % 3 == 0) {
                continue;
            }
            pd_member_t *m = &members[nm++];
            m->role = "actor";
            m->host = hosts[hh];
            m->node = hosts[hh];
            m->rank = r;
            m->replica_rank = PP_NONE;
        }
    }
    for (int e = 0; e < EXTRA; e++) {
        pd_member_t *m = &members[nm++];
        m->role = "actor";
        m->host = "host0";
        m->node = "host0";
        m->rank = 1000 + e;
        m->replica_rank = PP_NONE;
    }
    assert_int_equal(nm, HOSTS * 66 + EXTRA); /* r % 3 != 0: 66 of 0..99 */
    pd_window_t w;
    memset(&w, 0, sizeof(w));
    snprintf(w.job, sizeof(w.job), "run");
    pp_record_init(&pp_desc_window_spec, &w.spec);
    w.first = 10;
    w.last = 10;
    w.members = members;
    w.nmembers = nm;

    pp_steps_doc_t d;
    assert_int_equal(pd_stepdoc_build(&w, &h, NULL, &d), 0);
    assert_int_equal(d.ranks_n, HOSTS * RANKS + EXTRA);
    size_t flagged = 0;
    for (size_t i = 0; i < d.ranks_n; i++) {
        const pp_steps_rank_t *o = &d.ranks[i];
        int hh = o->host[4] - '0';
        bool expect = o->rank >= 1000 || o->rank % 3 != 0;
        assert_int_equal(o->member, expect);
        flagged += o->member;
        if (o->rank < 1000) { /* its own time, not another host's rank of that number */
            assert_int_equal(o->step_us[10 - d.steps[0]], (1000 + 10 * hh + o->rank) * 1000);
        }
    }
    assert_int_equal(flagged, nm);
    pd_stepdoc_free(&d);
    pd_history_fini(&h);
}

/* A window's record keeps every rank's times over the window's steps and 8
 * either side, fed as the live history takes them, after the live ring
 * (16 steps here) has dropped them: a rank 40 steps ahead of the window,
 * one that reaches it only later, and phase times set, not added, however
 * often the same step is fed. steps.json built from the record holds both
 * ranks; complete once both reached step 20 + 8. */
static void test_wrecord_keeps_what_the_live_history_drops(void **state)
{
    (void)state;
    pd_history_t live;
    pd_history_init(&live, 16, 16, 8);
    pd_windows_t ws;
    pd_windows_init(&ws, NULL, 0);
    pd_window_t *w = window_one(&ws, 7, PP_WS_PENDING, 20, 20);

    pd_hist_id_t fast_id = id_of("actor", 0), slow_id = id_of("actor", 1), other = fast_id;
    other.job = "other";
    pd_hist_rank_t *fast = pd_history_get(&live, &fast_id, 0);
    pd_hist_rank_t *slow = pd_history_get(&live, &slow_id, 0);
    pd_hist_rank_t *oth = pd_history_get(&live, &other, 0);
    for (int64_t st = 1; st <= 25; st++) { /* fast: steps 1..25 before the window is seen */
        pd_history_put(&live, fast, st, 1000 * st);
        pd_history_put_phase(&live, fast, st, "update", 100 * st);
    }
    pd_history_put(&live, oth, 20, 5);
    pd_wrecords_t rs;
    pd_wrecords_init(&rs);
    pd_wrecords_sync(&rs, &ws, &live, 1);
    pd_wrecord_t *rec = pd_wrecords_get(&rs, 7);
    assert_non_null(rec);
    assert_int_equal(rec->lo, 12);
    assert_int_equal(rec->hi, 28);
    assert_int_equal(rs.n, 1);
    pd_wrecords_sync(&rs, &ws, &live, 1); /* the same generation: nothing */
    assert_int_equal(rs.n, 1);
    for (int64_t st = 26; st <= 70; st++) { /* fast runs on: 40 steps past the window */
        pd_history_put(&live, fast, st, 1000 * st);
        pd_history_put_phase(&live, fast, st, "update", 100 * st);
        int64_t sev[3] = {st, 0, 10 * st};
        assert_int_equal(pd_history_sections(&live, fast, sev, 3), 1);
        pd_wrecords_feed(&rs, &live, fast);
        pd_wrecords_feed(&rs, &live, fast); /* fed twice: phases not doubled */
    }
    assert_int_equal(pd_history_step_us(&live, fast, 20), -1); /* the live ring dropped it */
    assert_false(pd_wrecord_complete(rec, &live));             /* slow has not reached 28 */
    for (int64_t st = 1; st <= 22; st++) { /* slow: 3x, reaches the window now */
        pd_history_put(&live, slow, st, 3000 * st);
        pd_wrecords_feed(&rs, &live, slow);
    }
    assert_false(pd_wrecord_complete(rec, &live));
    slow->gone = true; /* lost: it may come back with the steps it lacks */
    assert_false(pd_wrecord_complete(rec, &live));
    slow->left = true; /* said goodbye: no step of it is still to come */
    assert_true(pd_wrecord_complete(rec, &live));
    assert_false(pd_wrecord_complete(rec, NULL));
    slow->gone = slow->left = false; /* back (pd_history_get clears both) */
    assert_false(pd_wrecord_complete(rec, &live));
    for (int64_t st = 23; st <= 30; st++) { /* slow: on past the window */
        pd_history_put(&live, slow, st, 3000 * st);
        pd_wrecords_feed(&rs, &live, slow);
    }
    assert_true(pd_wrecord_complete(rec, &live));

    pp_steps_doc_t d;
    assert_int_equal(pd_stepdoc_build(w, &rec->h, NULL, &d), 0);
    assert_int_equal(d.ranks_n, 2); /* job "other" is not in it */
    assert_int_equal(d.steps[0], 12);
    assert_int_equal(d.steps[1], 28);
    for (int64_t st = 12; st <= 28; st++) {
        assert_int_equal(d.ranks[0].step_us[st - 12], 1000 * st);
        assert_int_equal(d.ranks[0].phase_us[st - 12], 100 * st);
        assert_int_equal(d.ranks[1].step_us[st - 12], 3000 * st);
        if (st > 25) { /* sections of the steps fed after the record began */
            assert_int_equal(pd_history_section_us(&rec->h, rec->h.v[0], 0, st), 10 * st);
        }
    }
    assert_true(d.ranks[0].median_ms == 20.0 && d.ranks[1].median_ms == 60.0); /* step 20 */
    pd_stepdoc_free(&d);

    w->state = PP_WS_CANCELLED; /* a cancelled window's record goes */
    pd_wrecords_sync(&rs, &ws, &live, 2);
    assert_null(pd_wrecords_get(&rs, 7));
    assert_int_equal(rs.n, 0);
    pd_wrecords_fini(&rs);
    pd_windows_fini(&ws);
    pd_history_fini(&live);
}

/* A window's record takes nothing while the live history still holds all
 * it would keep (issue 30: at 16,384 ranks the next window's record, made
 * as it starts, was megabytes held beside the window before's last write):
 * made for a window (steps 20..20: it keeps 12..28) whose ranks are at step
 * 15, it holds no rank until one is half the live ring (16 / 2 = 8 steps)
 * past step 12, at 20; then every rank of its job with what the live
 * history has of steps 12.., fed from then on. A second window's record
 * (32..48) takes its times when read (pd_wrecord_take, the report at the
 * window's end) or before the live history evicts a rank
 * (pd_wrecords_take_all). Before: each record copied every rank as it was
 * made (2 ranks after the sync, not 0). */
static void test_wrecord_takes_its_times_when_needed(void **state)
{
    (void)state;
    pd_history_t live;
    pd_history_init(&live, 16, 16, 8);
    pd_windows_t ws;
    pd_windows_init(&ws, NULL, 0);
    pd_window_t *w = window_one(&ws, 7, PP_WS_PENDING, 20, 20);
    window_one(&ws, 8, PP_WS_PENDING, 40, 40);
    pd_hist_id_t a_id = id_of("actor", 0), b_id = id_of("actor", 1), other = a_id;
    other.job = "other";
    pd_hist_rank_t *a = pd_history_get(&live, &a_id, 0);
    pd_hist_rank_t *b = pd_history_get(&live, &b_id, 0);
    pd_hist_rank_t *oth = pd_history_get(&live, &other, 0);
    for (int64_t st = 1; st <= 15; st++) {
        pd_history_put(&live, a, st, 1000 * st);
        pd_history_put_phase(&live, a, st, "update", 100 * st);
        pd_history_put(&live, b, st, 2000 * st);
    }
    pd_history_put(&live, oth, 15, 5);
    pd_wrecords_t rs;
    pd_wrecords_init(&rs);
    pd_wrecords_sync(&rs, &ws, &live, 1);
    assert_int_equal(rs.n, 2);
    pd_wrecord_t *rec = pd_wrecords_get(&rs, 7), *rec8 = pd_wrecords_get(&rs, 8);
    assert_non_null(rec);
    assert_non_null(rec8);
    assert_int_equal(rec->lo, 12);
    assert_int_equal(rec->hi, 28);
    assert_false(rec->taken);
    assert_int_equal(rec->h.n, 0);
    assert_false(pd_wrecord_complete(rec, &live)); /* nothing taken: not complete */
    for (int64_t st = 16; st <= 19; st++) {
        pd_history_put(&live, a, st, 1000 * st);
        pd_history_put_phase(&live, a, st, "update", 100 * st);
        pd_history_put(&live, b, st, 2000 * st);
        pd_wrecords_feed(&rs, &live, a);
        pd_wrecords_feed(&rs, &live, b);
    }
    assert_false(rec->taken);
    assert_int_equal(rec->h.n, 0);
    pd_history_put(&live, a, 20, 20000);
    pd_history_put_phase(&live, a, 20, "update", 2000);
    pd_wrecords_feed(&rs, &live, a); /* a at 20 = 12 + 8: taken, b with it */
    assert_true(rec->taken);
    assert_int_equal(rec->h.n, 2); /* job "other" is not in it */
    assert_false(rec8->taken);     /* 20 < 32 + 8 */
    assert_int_equal(rec8->h.n, 0);
    const pd_hist_rank_t *ra = pd_history_find(&rec->h, &a_id);
    const pd_hist_rank_t *rb = pd_history_find(&rec->h, &b_id);
    assert_non_null(ra);
    assert_non_null(rb);
    assert_int_equal(pd_history_step_us(&rec->h, ra, 11), -1);
    assert_int_equal(pd_history_step_us(&rec->h, ra, 12), 12000);
    assert_int_equal(pd_history_step_us(&rec->h, ra, 20), 20000);
    assert_int_equal(pd_history_phase_us(&rec->h, ra, 0, 12), 1200);
    assert_int_equal(pd_history_phase_us(&rec->h, ra, 0, 20), 2000);
    assert_int_equal(pd_history_step_us(&rec->h, rb, 19), 38000);
    assert_int_equal(pd_history_step_us(&rec->h, rb, 20), -1);
    for (int64_t st = 20; st <= 40; st++) { /* on, fed: past what the live ring keeps */
        pd_history_put(&live, b, st, 2000 * st);
        pd_wrecords_feed(&rs, &live, b);
        if (st > 20) {
            pd_history_put(&live, a, st, 1000 * st);
            pd_wrecords_feed(&rs, &live, a);
        }
    }
    assert_int_equal(pd_history_step_us(&live, a, 20), -1); /* the live ring dropped it */
    assert_true(pd_wrecord_complete(rec, &live));
    pp_steps_doc_t d;
    assert_int_equal(pd_stepdoc_build(w, &rec->h, NULL, &d), 0);
    assert_int_equal(d.ranks_n, 2);
    assert_int_equal(d.steps[0], 12);
    assert_int_equal(d.steps[1], 28);
    for (int64_t st = 12; st <= 28; st++) {
        const pp_steps_rank_t *da = d.ranks[0].rank == 0 ? &d.ranks[0] : &d.ranks[1];
        const pp_steps_rank_t *db = d.ranks[0].rank == 0 ? &d.ranks[1] : &d.ranks[0];
        assert_int_equal(da->step_us[st - 12], 1000 * st);
        assert_int_equal(db->step_us[st - 12], 2000 * st);
    }
    pd_stepdoc_free(&d);
    /* a at 40 = 32 + 8 took window 8's record as it was fed */
    assert_true(rec8->taken);
    assert_int_equal(rec8->h.n, 2);

    /* window 9 (60..60): taken when read, and before an eviction */
    window_one(&ws, 9, PP_WS_PENDING, 60, 60);
    window_one(&ws, 10, PP_WS_PENDING, 80, 80);
    pd_wrecords_sync(&rs, &ws, &live, 2);
    pd_wrecord_t *rec9 = pd_wrecords_get(&rs, 9), *rec10 = pd_wrecords_get(&rs, 10);
    assert_false(rec9->taken);
    assert_false(rec10->taken);
    pd_wrecord_take(rec9, &live);
    assert_true(rec9->taken);
    assert_int_equal(rec9->h.n, 2);
    assert_false(rec10->taken);
    pd_wrecords_take_all(&rs, &live);
    assert_true(rec10->taken);
    assert_int_equal(rec10->h.n, 2);
    pd_wrecords_fini(&rs);
    pd_windows_fini(&ws);
    pd_history_fini(&live);
}

/* Issue 28: with no job configured, one job's straggler (another user's
 * worker reporting slow steps on purpose) spends its own rate limit and
 * byte budget, not the trigger's: another job's straggler still gets its
 * windows. */
static void test_straggler_budget_per_job(void **state)
{
    (void)state;
    pd_history_t h;
    pd_straggler_t s;
    pd_straggler_hit_t hit;
    pd_history_init(&h, 16, 4, 16);
    const strag_case_t *t = &strag_cases[0]; /* rank 1 slow */
    const char *jobs[] = {"evil", "run"};
    for (int j = 0; j < 2; j++) {
        for (int k = 0; k < t->nranks; k++) {
            pd_hist_id_t id = {jobs[j], "actor", "node1", NULL, k, PP_NONE, 100 * (j + 1) + k};
            pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
            for (int st = 0; st < 6; st++) {
                pd_history_put(&h, r, st + 1, t->ms[k][st] * 1000);
            }
        }
    }
    pd_straggler_cfg_t cfg = cfg_of(2.0, 3); /* any job, 1 s apart */
    cfg.max_bytes = 1000;
    pd_straggler_init(&s, &cfg, true);
    assert_true(pd_straggler_check(&s, &h, 0, &hit));
    assert_string_equal(hit.slow->job, "evil");
    pd_straggler_fired(&s, &hit, 7, 0);
    pd_straggler_window_done(&s, 7, 5000); /* evil's windows took the budget */
    assert_true(pd_straggler_check(&s, &h, 2000, &hit));
    assert_string_equal(hit.slow->job, "run");
    assert_int_equal(hit.slow->rank, 1);
    pd_straggler_fired(&s, &hit, 9, 2000);
    pd_straggler_window_done(&s, 9, 10);
    assert_false(pd_straggler_check(&s, &h, 2999, &hit)); /* run's interval; evil's budget */
    assert_true(pd_straggler_check(&s, &h, 3000, &hit));
    assert_string_equal(hit.slow->job, "run");
    assert_int_equal(s.bytes, 5010);
    /* one job configured: its gates are the trigger's own, as before */
    snprintf(cfg.job, sizeof(cfg.job), "run");
    pd_straggler_arm(&s, &cfg);
    assert_true(pd_straggler_check(&s, &h, 0, &hit));
    pd_straggler_fired(&s, &hit, 11, 0);
    pd_straggler_window_done(&s, 11, 1000);
    assert_false(pd_straggler_check(&s, &h, 100000, &hit));
    pd_history_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_events_table),
        cmocka_unit_test(test_history_ring_keeps_the_newest_steps),
        cmocka_unit_test(test_history_phases),
        cmocka_unit_test(test_history_evicts_the_least_recent),
        cmocka_unit_test(test_history_stats),
        cmocka_unit_test(test_straggler_table),
        cmocka_unit_test(test_straggler_rate_limit_budget_and_roles),
        cmocka_unit_test(test_straggler_budget_per_job),
        cmocka_unit_test(test_stepdoc_and_report),
        cmocka_unit_test(test_stepdoc_matches_members_by_identity),
        cmocka_unit_test(test_wrecord_keeps_what_the_live_history_drops),
        cmocka_unit_test(test_wrecord_takes_its_times_when_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
