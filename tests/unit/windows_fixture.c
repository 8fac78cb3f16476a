// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
#include "windows_fixture.h"

#include <stdlib.h>

static void on_changed(void *arg)
{
    ((fixture_t *)arg)->changed++;
}

static void on_dirty(void *arg)
{
    ((fixture_t *)arg)->dirty++;
}

static void on_gather(void *arg, pd_window_t *w, pd_member_t *m, size_t cap, int64_t owner)
{
    fixture_t *f = arg;
    assert_true(f->ngathered < 16);
    f->gathered[f->ngathered++] = (gathered_t){w->id, m->client, owner, cap};
}

static void on_complete(void *arg, pd_window_t *w)
{
    fixture_t *f = arg;
    assert_true(f->ncompleted < 8);
    f->completed[f->ncompleted++] = w->id;
}

pd_rank_t *add_rank(fixture_t *f, const char *job, const char *role, int64_t rank, int64_t replica,
                    const char *host, int64_t pid)
{
    pd_rank_t *k;
    pp_hello_t h;
    pp_record_init(&pp_desc_hello, &h);
    h.job = (char *)job;
    h.role = (char *)role;
    h.rank = rank;
    h.replica_rank = replica;
    h.host = (char *)host;
    h.pid = pid;
    assert_int_equal(pd_registry_add(&f->reg, &h, "node1", 0, &k), 0);
    k->uid = 1000 + rank;
    /* at step 10, began 30 ms ago, 100 ms a step */
    k->step = 10;
    k->in_step = true;
    k->step_began_us = NOW - 30 * MS;
    k->step_us = 100 * MS;
    return k;
}

int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    pd_log_init(&f->log, PD_LOG_ERROR - 1); /* quiet */
    pd_registry_init(&f->reg, 64);
    pd_windows_init(&f->ws, &f->log, 8);
    f->ws.hooks = (pd_windows_hooks_t){on_changed, on_dirty, on_gather, on_complete, f};
    f->k[0] = add_rank(f, "run", "actor", 0, PP_NONE, "h0", 100);
    f->k[1] = add_rank(f, "run", "actor", 1, PP_NONE, "h1", 101);
    f->k[2] = add_rank(f, "run", "rollout", 2, 0, "h2", 102);
    f->k[3] = add_rank(f, "run", "rollout", 3, 1, "h3", 103);
    f->k[4] = add_rank(f, "run", "critic", 0, PP_NONE, "h4", 104);
    *state = f;
    return 0;
}

int teardown(void **state)
{
    fixture_t *f = *state;
    pd_windows_fini(&f->ws);
    pd_registry_fini(&f->reg);
    free(f);
    return 0;
}

pd_plan_params_t params(void)
{
    return (pd_plan_params_t){
        .now_us = NOW, .latency_us = 2 * MS, .margin_us = 100 * MS, .default_job = "run"};
}

/* A window over `steps` [first, last] for the selectors; its id. */
int64_t create(fixture_t *f, int64_t first, int64_t last, pp_selector_t *sels, size_t n,
               pp_mode_t mode)
{
    pp_window_spec_t spec;
    pd_plan_out_t out;
    pd_plan_params_t p = params();
    char err[256] = "";
    int64_t *ids;
    size_t nids;
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.start = first;
    spec.end = last + 1;
    spec.selectors = sels;
    spec.selectors_n = n;
    spec.mode = mode;
    spec.tool = "sim";
    if (pd_windows_plan(&f->ws, &f->reg, &spec, &p, &out, err, sizeof(err)) != 0) {
        fail_msg("plan: %s", err);
    }
    assert_int_equal(pd_windows_add(&f->ws, &f->reg, &spec, &out, "/save", NOW / MS, &ids, &nids),
                     0);
    assert_int_equal(nids, 1);
    int64_t id = ids[0];
    free(ids);
    return id;
}

pp_selector_t role_sel(const char *role)
{
    pp_selector_t s;
    pp_record_init(&pp_desc_selector, &s);
    s.role = (char *)role;
    s.all_ranks = true;
    return s;
}
