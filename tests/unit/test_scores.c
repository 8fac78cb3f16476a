// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Section scores and the synchronous straggler (daemon/core/scores.c), by
 * tables. The scores follow NVIDIA's straggler detector as written in
 * nvidia-resiliency-ext at commit d8686d9c7015c39ce91dd01788c0ab111a24818b,
 * src/nvidia_resiliency_ext/attribution/straggler/reporting.py,
 * ReportGenerator._compute_sections_perf_scores: score = reference / median,
 * the reference being the smallest median of the section over the ranks
 * (relative, _all_reduce_times with ReduceOp.MIN) or the smallest median the
 * rank itself showed over the report intervals so far, the current one
 * included (individual, _update_local_min_times before the score); medians
 * are torch.median's (straggler.py _get_section_summaries), the lower of the
 * two middle values for an even count. The expected values below are those
 * formulas worked by hand on the tables' times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"
#include "scores.h"

#define NR 4

/* one rank's steps 1..n: step time and forward / backward / comm (us) */
typedef struct steps_in {
    int64_t step[16], fwd[16], bwd[16], comm[16];
} steps_in_t;

static pd_hist_rank_t *feed(pd_history_t *h, int64_t rank, const steps_in_t *in, int n)
{
    pd_hist_id_t id = {"run", "worker", "node1", NULL, rank, PP_NONE, 100 + rank};
    pd_hist_rank_t *r = pd_history_get(h, &id, 0);
    assert_non_null(r);
    for (int i = 0; i < n; i++) {
        int64_t s = i + 1;
        int64_t sev[] = {s, PD_SEC_FORWARD, in->fwd[i], s, PD_SEC_BACKWARD, in->bwd[i],
                         s, PD_SEC_COMM,    in->comm[i]};
        pd_history_put(h, r, s, in->step[i]);
        assert_int_equal(pd_history_sections(h, r, sev, 9), 3);
    }
    return r;
}

static void near(double got, double want)
{
    if (got < want - 1e-9 || got > want + 1e-9) {
        fail_msg("score %.12f, expected %.12f", got, want);
    }
}

/* ---- the scores ---- */

static void test_scores_relative_and_individual(void **state)
{
    (void)state;
    pd_history_t h;
    pd_history_init(&h, 64, 8, 16);
    /* recent = 4: the current interval is steps 5..8, the one before 1..4 */
    static const steps_in_t in[NR] = {
        /* rank 0: forward 5 ms, then 10, 12, 11, 13 (lower median 11) */
        {{20, 20, 20, 20, 30, 30, 30, 30},
         {5, 5, 5, 5, 10, 12, 11, 13},
         {1, 1, 1, 1, 2, 2, 2, 2},
         {0, 0, 0, 0, 0, 0, 0, 0}},
        /* rank 1: 20, 22, 21, 23 -> 21 */
        {{30, 30, 30, 30, 30, 30, 30, 30},
         {20, 20, 20, 20, 20, 22, 21, 23},
         {2, 2, 2, 2, 2, 2, 2, 2},
         {1, 1, 1, 1, 3, 3, 3, 3}},
        /* rank 2: 10 */
        {{30, 30, 30, 30, 30, 30, 30, 30},
         {10, 10, 10, 10, 10, 10, 10, 10},
         {2, 2, 2, 2, 2, 2, 2, 2},
         {4, 4, 4, 4, 4, 4, 4, 4}},
        /* rank 3: 40, 44, 42, 41 -> 41 */
        {{60, 60, 60, 60, 60, 60, 60, 60},
         {40, 40, 40, 40, 40, 44, 42, 41},
         {2, 2, 2, 2, 2, 2, 2, 2},
         {0, 0, 0, 0, 0, 0, 0, 0}},
    };
    for (int r = 0; r < NR; r++) {
        feed(&h, r, &in[r], 8);
    }
    pd_score_role_t *roles;
    size_t n;
    assert_int_equal(pd_scores_compute(&h, NULL, 4, 0, &roles, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(roles[0].role, "worker");
    assert_int_equal(roles[0].n, NR);
    const pd_score_rank_t *k = roles[0].ranks;
    static const int64_t fwd[NR] = {11, 21, 10, 41};
    for (int r = 0; r < NR; r++) {
        assert_int_equal(k[r].r->rank, r);
        assert_int_equal(k[r].med_us[PD_SEC_FORWARD], fwd[r]);
    }
    assert_int_equal(roles[0].min_us[PD_SEC_FORWARD], 10);
    near(k[0].rel[PD_SEC_FORWARD], 10.0 / 11.0);
    near(k[1].rel[PD_SEC_FORWARD], 10.0 / 21.0);
    near(k[2].rel[PD_SEC_FORWARD], 1.0);
    near(k[3].rel[PD_SEC_FORWARD], 10.0 / 41.0);
    /* individual: rank 0's best interval had median 5, the current 11 */
    assert_int_equal(k[0].best_us[PD_SEC_FORWARD], 5);
    near(k[0].ind[PD_SEC_FORWARD], 5.0 / 11.0);
    /* rank 1: steps 1..4 median 20, now 21 */
    near(k[1].ind[PD_SEC_FORWARD], 20.0 / 21.0);
    near(k[2].ind[PD_SEC_FORWARD], 1.0);
    /* compute = forward + backward + optimizer: rank 0 now 12,14,13,15 -> 13 */
    assert_int_equal(k[0].med_us[PD_SEC_COMPUTE], 13);
    near(k[0].rel[PD_SEC_COMPUTE], 12.0 / 13.0); /* rank 2: 12 */
    /* other = step - every section: rank 0 30 - (12..15) -> 18,16,17,15 -> 16 */
    assert_int_equal(k[0].med_us[PD_SEC_OTHER], 16);
    /* comm: a fastest rank at 0 gives the others a relative score of 0 */
    assert_int_equal(roles[0].min_us[PD_SEC_COMM], 0);
    near(k[1].rel[PD_SEC_COMM], 0.0);
    near(k[0].rel[PD_SEC_COMM], 1.0); /* 0 of 0: not slow */
    /* sections never sent: known as 0 */
    assert_int_equal(k[0].med_us[PD_SEC_DATA], 0);
    assert_int_equal(k[0].step_us, 30);
    pd_scores_free(roles, n);

    /* top's rows: the two lowest compute scores, lowest first */
    pp_rank_sections_t *rows;
    size_t nrows;
    assert_int_equal(pd_scores_rows(&h, "run", 4, 2, &rows, &nrows), 0);
    assert_int_equal(nrows, 2);
    assert_int_equal(rows[0].rank, 3); /* compute 42,46,44,43 -> 43 */
    near(rows[0].relative, 12.0 / 43.0);
    near(rows[0].compute_ms, 0.043);
    near(rows[0].step_ms, 0.060);
    assert_int_equal(rows[1].rank, 1); /* 22,24,23,25 -> 23 */
    near(rows[1].relative, 12.0 / 23.0);
    near(rows[1].individual, 22.0 / 23.0);
    free(rows);
    assert_int_equal(pd_scores_rows(&h, "other", 4, 2, &rows, &nrows), 0);
    assert_int_equal(nrows, 0);
    free(rows);

    /* one step back: steps 4..7 */
    assert_int_equal(pd_scores_compute(&h, NULL, 4, 1, &roles, &n), 0);
    assert_int_equal(roles[0].ranks[0].med_us[PD_SEC_FORWARD], 10); /* 5,10,12,11 */
    assert_int_equal(roles[0].ranks[3].med_us[PD_SEC_FORWARD], 40); /* 40,40,44,42 */
    pd_scores_free(roles, n);
    pd_history_fini(&h);
}

static void test_scores_unknown(void **state)
{
    (void)state;
    pd_history_t h;
    pd_history_init(&h, 64, 8, 16);
    pd_hist_id_t id = {"run", "worker", "node1", NULL, 0, PP_NONE, 100};
    pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
    pd_score_role_t *roles;
    size_t n;
    /* step times but no section: not scored */
    for (int s = 1; s <= 8; s++) {
        pd_history_put(&h, r, s, 1000);
    }
    assert_int_equal(pd_scores_compute(&h, NULL, 4, 0, &roles, &n), 0);
    assert_int_equal(n, 0);
    pd_scores_free(roles, n);
    /* malformed triples are skipped */
    int64_t bad[] = {3, PP_SECTIONS, 5, 3, -1, 5, 3, 1, -5, 4, 1, 250};
    assert_int_equal(pd_history_sections(&h, r, bad, 12), 1);
    assert_int_equal(pd_history_section_us(&h, r, 1, 4), 250);
    assert_int_equal(pd_history_section_us(&h, r, 1, 3), -1);
    assert_int_equal(pd_history_section_us(&h, r, 0, 4), -1);
    assert_int_equal(pd_history_section_us(&h, r, PP_SECTIONS, 4), -1);
    /* one step with sections of 4: fewer than half the interval, unknown */
    assert_int_equal(pd_scores_compute(&h, NULL, 4, 0, &roles, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(roles[0].ranks[0].med_us[PD_SEC_FORWARD], -1);
    near(roles[0].ranks[0].rel[PD_SEC_FORWARD], -1);
    pd_scores_free(roles, n);
    pd_history_fini(&h);
}

/* ---- the synchronous straggler ---- */

typedef struct sync_case {
    const char *what;
    int64_t slow_from;   /* rank 2 slow from this step (0: never) */
    int64_t slow_fwd;    /* its forward then (us) */
    int64_t wait_others; /* the others' comm while it is slow */
    int64_t wait_slow;   /* its comm */
    double threshold;
    int64_t consecutive;
    bool found;
    double rel;    /* the straggler's compute relative score */
    int64_t wait0; /* rank 0's comm while rank 2 is slow; 0: the others' */
} sync_case_t;

/* healthy: forward 30, backward 10 (compute 40), comm 5, step 100 */
static const sync_case_t sync_cases[] = {
    {"slow compute, the others wait", 3, 70, 45, 5, 0.75, 3, true, 40.0 / 80.0, 0},
    {"equal step times still name it", 1, 70, 45, 5, 0.75, 1, true, 40.0 / 80.0, 0},
    {"slow, nobody waits for it: not the synchronous straggler", 1, 70, 5, 5, 0.75, 3, false, 0, 0},
    {"the others wait less than half its excess", 1, 70, 24, 5, 0.75, 3, false, 0, 0},
    {"the others wait half its excess", 1, 70, 25, 5, 0.75, 3, true, 0.5, 0},
    {"score over the threshold", 1, 40, 15, 5, 0.75, 3, false, 0, 0}, /* 40 / 50 = 0.8 */
    {"score under a tighter threshold", 1, 40, 15, 5, 0.85, 3, true, 40.0 / 50.0, 0},
    /* recent 8 of 10 steps: slow from step 4 holds the median for the
     * 3 intervals ending at 10, 9, 8; from step 5 not the one ending at 8 */
    {"three intervals in a row", 4, 70, 45, 5, 0.75, 3, true, 0.5, 0},
    {"two intervals of three", 5, 70, 45, 5, 0.75, 3, false, 0, 0},
    {"two intervals of two", 5, 70, 45, 5, 0.75, 2, true, 0.5, 0},
    {"healthy", 0, 0, 0, 0, 0.75, 1, false, 0, 0},
    /* another rank waits less than it: it is not the one they wait for */
    {"another rank waits less", 1, 70, 45, 5, 0.75, 3, false, 0, 4},
    {"another rank waits as little", 1, 70, 45, 5, 0.75, 3, true, 0.5, 5},
    /* no wait measured at all (comm 0 everywhere): not synchronous evidence */
    {"no comm measured", 1, 70, 0, 0, 0.75, 3, false, 0, 0},
};

static void test_scores_sync_straggler(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(sync_cases) / sizeof(sync_cases[0]); c++) {
        const sync_case_t *t = &sync_cases[c];
        pd_history_t h;
        pd_history_init(&h, 64, 8, 16);
        for (int r = 0; r < NR; r++) {
            steps_in_t in;
            for (int i = 0; i < 10; i++) {
                bool slow = t->slow_from > 0 && i + 1 >= t->slow_from;
                in.step[i] = 100;
                in.bwd[i] = 10;
                in.fwd[i] = slow && r == 2 ? t->slow_fwd : 30;
                in.comm[i] = !slow                     ? 5
                             : r == 2                  ? t->wait_slow
                             : r == 0 && t->wait0 != 0 ? t->wait0
                                                       : t->wait_others;
            }
            feed(&h, r, &in, 10);
        }
        pd_score_hit_t hit;
        bool found = pd_scores_straggler(&h, 8, t->threshold, t->consecutive, NULL, NULL, &hit);
        if (found != t->found) {
            fail_msg("%s: found %d", t->what, found);
        }
        if (found) {
            assert_int_equal(hit.slow->rank, 2);
            assert_int_equal(hit.peer->rank, 0); /* the others alike: the first */
            near(hit.rel, t->rel);
            assert_int_equal(hit.slow_compute_us, t->slow_fwd + 10);
            assert_int_equal(hit.peer_compute_us, 40);
            assert_int_equal(hit.slow_comm_us, t->wait_slow);
            assert_int_equal(hit.peer_comm_us, t->wait_others);
        }
        pd_history_fini(&h);
    }
}

/* One rank's times (us), the same at every step. */
typedef struct flat {
    int64_t step, fwd, bwd, comm;
} flat_t;

/* h new, with NR ranks over 10 steps, rank r taking ranks[r] each step. */
static void feed_flat(pd_history_t *h, const flat_t *ranks)
{
    pd_history_init(h, 64, 8, 16);
    for (int r = 0; r < NR; r++) {
        steps_in_t in;
        for (int i = 0; i < 10; i++) {
            in.step[i] = ranks[r].step;
            in.fwd[i] = ranks[r].fwd;
            in.bwd[i] = ranks[r].bwd;
            in.comm[i] = ranks[r].comm;
        }
        feed(h, r, &in, 10);
    }
}

static bool only_actor(const pd_hist_rank_t *r, void *arg)
{
    return strcmp(r->role, (const char *)arg) == 0;
}

static void test_scores_sync_filter(void **state)
{
    (void)state;
    pd_history_t h;
    flat_t t[NR];
    for (int r = 0; r < NR; r++) {
        t[r] = (flat_t){.step = 100, .fwd = r == 1 ? 90 : 30, .bwd = 10, .comm = r == 1 ? 1 : 60};
    }
    feed_flat(&h, t);
    pd_score_hit_t hit;
    assert_true(pd_scores_straggler(&h, 8, 0.75, 3, only_actor, "worker", &hit));
    assert_int_equal(hit.slow->rank, 1);
    assert_false(pd_scores_straggler(&h, 8, 0.75, 3, only_actor, "actor", &hit));
    /* a rank gone is out */
    ((pd_hist_rank_t *)hit.slow)->gone = true;
    assert_false(pd_scores_straggler(&h, 8, 0.75, 3, NULL, NULL, &hit));
    pd_history_fini(&h);
}

/* The synchronous straggler in h (8 recent steps, 3 intervals in a row,
 * `threshold`) is found exactly when `want`: rank 3, relative score `rel`.
 * The hit (until the next call), or NULL. */
static const pd_score_hit_t *straggler_3(pd_history_t *h, double threshold, bool want, double rel)
{
    static pd_score_hit_t hit;
    bool found = pd_scores_straggler(h, 8, threshold, 3, NULL, NULL, &hit);
    assert_int_equal(found, want);
    if (!found) {
        return NULL;
    }
    assert_int_equal(hit.slow->rank, 3);
    near(hit.rel, rel);
    return &hit;
}

/* an excess under 5 % of the others' compute is no straggler */
static void test_scores_sync_floor(void **state)
{
    (void)state;
    for (int64_t extra = 1900; extra <= 2000; extra += 100) {
        pd_history_t h;
        flat_t t[NR];
        for (int r = 0; r < NR; r++) {
            t[r] = (flat_t){.step = 100000,
                            .fwd = 30000 + (r == 3 ? extra : 0),
                            .bwd = 10000,
                            .comm = r == 3 ? 100 : 100 + extra};
        }
        feed_flat(&h, t);
        straggler_3(&h, 0.999, extra == 2000, 40000.0 / 42000.0);
        pd_history_fini(&h);
    }
}

/* the others' own spread: an excess within 4 MADs of their computes is
 * no straggler. Others' computes 30, 40, 50 (+ backward 0): median 40,
 * deviations 10, 0, 10: MAD 10, so an excess must be over 40. */
static void test_scores_sync_spread(void **state)
{
    (void)state;
    static const int64_t slow_fwd[] = {80, 81};
    for (int c = 0; c < 2; c++) {
        pd_history_t h;
        flat_t t[NR];
        for (int r = 0; r < NR; r++) {
            t[r] = (flat_t){.step = 1000,
                            .fwd = r == 3 ? slow_fwd[c] : 30 + 10 * r,
                            .bwd = 0,
                            .comm = r == 3 ? 10 : 200};
        }
        feed_flat(&h, t);
        const pd_score_hit_t *hit = straggler_3(&h, 0.75, c == 1, 30.0 / 81.0);
        if (hit != NULL) {
            assert_int_equal(hit->peer->rank, 1); /* 40: the others' median */
        }
        pd_history_fini(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scores_relative_and_individual),
        cmocka_unit_test(test_scores_unknown),
        cmocka_unit_test(test_scores_sync_straggler),
        cmocka_unit_test(test_scores_sync_filter),
        cmocka_unit_test(test_scores_sync_floor),
        cmocka_unit_test(test_scores_sync_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
