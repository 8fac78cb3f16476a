// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The straggler trigger's window and the node's metrics: a window the
 * trigger opened that fails (its manifest can never be written) lets the
 * trigger fire again, as a done or cancelled one does; and the metrics
 * export every window state, failed included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"
#include "node.h"
#include "trigger.h"
#include "window_one.h"

typedef struct fixture {
    pd_node_t n;
    pd_config_t cfg;
    pd_windows_t ws;
    pd_history_t h;
    pd_straggler_t s;
    pd_registry_t reg;
} fixture_t;

static void fixture_init(fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    pd_windows_init(&f->ws, NULL, 0);
    pd_history_init(&f->h, 16, 16, 8);
    pd_registry_init(&f->reg, 8);
    pd_straggler_cfg_t c;
    memset(&c, 0, sizeof(c));
    c.factor = 2;
    c.consecutive = 3;
    c.steps = 2;
    pd_straggler_init(&f->s, &c, true);
    f->n.win = &f->ws;
    f->n.hist = &f->h;
    f->n.strag = &f->s;
    f->n.reg = &f->reg;
    f->n.name = "node1";
    pd_config_defaults(&f->cfg);
    f->n.cfg = &f->cfg;
    f->n.save_path = "/tmp";
}

static void fixture_fini(fixture_t *f)
{
    pd_windows_fini(&f->ws);
    pd_history_fini(&f->h);
    pd_registry_fini(&f->reg);
}

static pd_window_t *window_add(fixture_t *f, int64_t id, pp_window_state_t state)
{
    return window_one(&f->ws, id, state, 0, 0);
}

static void fired(fixture_t *f, int64_t window)
{
    pd_straggler_hit_t hit;
    memset(&hit, 0, sizeof(hit));
    snprintf(hit.reason, sizeof(hit.reason), "test");
    pd_straggler_fired(&f->s, &hit, window, 1000);
}

typedef struct over_case {
    pp_window_state_t state;
    bool over;
} over_case_t;

static void test_trigger_window_over_by_state(void **state)
{
    (void)state;
    static const over_case_t cases[] = {
        {PP_WS_PENDING, false}, {PP_WS_ACTIVE, false},   {PP_WS_GATHERING, false},
        {PP_WS_DONE, true},     {PP_WS_CANCELLED, true}, {PP_WS_FAILED, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fixture_t f;
        fixture_init(&f);
        pd_window_t *w = window_add(&f, 5, PP_WS_ACTIVE);
        fired(&f, 5);
        assert_true(f.s.live);
        pd_trigger_tick(&f.n, 2000);
        assert_true(f.s.live); /* active: still its window */
        w->state = cases[i].state;
        pd_trigger_tick(&f.n, 3000);
        if (f.s.live != !cases[i].over) {
            fail_msg("window state %s: live %d", pp_enum_name(&pp_enum_window_state, (int)w->state),
                     f.s.live);
        }
        fixture_fini(&f);
    }
}

static void test_metrics_windows_every_state(void **state)
{
    (void)state;
    fixture_t f;
    fixture_init(&f);
    window_add(&f, 1, PP_WS_DONE);
    window_add(&f, 2, PP_WS_FAILED);
    window_add(&f, 3, PP_WS_FAILED);
    window_add(&f, 4, PP_WS_CANCELLED);
    window_add(&f, 5, PP_WS_ACTIVE);
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(pd_metrics_text(&f.n, &body, &len), 0);
    static const struct {
        const char *state;
        int n;
    } want[] = {{"pending", 0}, {"active", 1},    {"gathering", 0},
                {"done", 1},    {"cancelled", 1}, {"failed", 2}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char line[128];
        snprintf(line, sizeof(line), "\nprofd_windows{state=\"%s\"} %d\n", want[i].state,
                 want[i].n);
        assert_non_null(strstr(body, line));
    }
    free(body);
    fixture_fini(&f);
}

static pd_rank_t *rank_add(fixture_t *f, const char *job, const char *role, int64_t rank)
{
    pp_hello_t h;
    pd_rank_t *k = NULL;
    pp_record_init(&pp_desc_hello, &h);
    h.job = (char *)job;
    h.role = (char *)role;
    h.rank = rank;
    h.host = "h1";
    h.pid = 100 + rank;
    assert_int_equal(pd_registry_add(&f->reg, &h, "node1", 0, &k), 0);
    return k;
}

/* profd_ranks: each job and role once, in the order the registry first
 * holds it, its active and lost ranks counted (ranks of a pair apart from
 * each other, a lost one among them). */
static void test_metrics_ranks_by_job_and_role(void **state)
{
    (void)state;
    fixture_t f;
    fixture_init(&f);
    rank_add(&f, "a", "actor", 0);
    rank_add(&f, "a", "rollout", 1);
    rank_add(&f, "b", "actor", 0);
    rank_add(&f, "a", "actor", 2)->state = PD_RANK_LOST;
    rank_add(&f, "a", "rollout", 3);
    rank_add(&f, "a", "actor", 4);
    rank_add(&f, "b", "actor", 1)->state = PD_RANK_LOST;
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(pd_metrics_text(&f.n, &body, &len), 0);
    const char *want = "# TYPE profd_ranks gauge\n"
                       "profd_ranks{job=\"a\",role=\"actor\",state=\"active\"} 2\n"
                       "profd_ranks{job=\"a\",role=\"actor\",state=\"lost\"} 1\n"
                       "profd_ranks{job=\"a\",role=\"rollout\",state=\"active\"} 2\n"
                       "profd_ranks{job=\"a\",role=\"rollout\",state=\"lost\"} 0\n"
                       "profd_ranks{job=\"b\",role=\"actor\",state=\"active\"} 1\n"
                       "profd_ranks{job=\"b\",role=\"actor\",state=\"lost\"} 1\n"
                       "# HELP profd_ranks_stalled ";
    if (strstr(body, want) == NULL) {
        const char *at = strstr(body, "# TYPE profd_ranks gauge");
        fail_msg("profd_ranks:\n%.600s", at ? at : body);
    }
    free(body);
    fixture_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trigger_window_over_by_state),
        cmocka_unit_test(test_metrics_windows_every_state),
        cmocka_unit_test(test_metrics_ranks_by_job_and_role),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
