// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * cluster/state.c, a coordinator's state on disk, against what state.h
 * promises: what pd_state_fini saves (the instance, the next window id,
 * every unfinished window with its members; a finished one is not kept) a
 * restarted coordinator reads back with pd_state_load; no file is no
 * state; a corrupt file stops the start (PROFD_ECONFIG) with one line
 * naming the file and what is wrong, rather than lose it. No loop runs and
 * there is no node list (coord NULL, as state.h allows).
 */
#include <unistd.h>

#include "unit_fixture.h"

#include "node_fixture.h"
#include "state.h"

#define INSTANCE "c0ffee0123456789"
#define AGAIN    " (move the file away to start afresh)"
#define MS       1000LL
#define NOW      (1000000 * MS) /* us */

typedef struct fixture {
    unit_dir_t files; /* first: unit_dir_setup */
    unit_node_t d;
    pd_state_t s;
    char instance[24];
    char err[512];
} fixture_t;

/* A coordinator's node state, empty, saving below f->files.dir. */
static void node_init(fixture_t *f)
{
    unit_node_init(&f->d, "coordinator", f->files.dir, 8);
    memset(f->instance, 0, sizeof(f->instance));
    pd_state_init(&f->s, &f->d.n, NULL, f->instance, sizeof(f->instance));
}

static int setup(void **state)
{
    return unit_dir_setup(state, sizeof(fixture_t), "profd-state", ".profd-coordinator.json");
}

static void add_rank(fixture_t *f, int64_t rank, const char *node)
{
    pd_rank_t *k;
    assert_int_equal(unit_node_add(&f->d, "actor", rank, "h1", node, &k), 0);
    /* at step 10, 100 ms a step */
    k->step = 10;
    k->in_step = true;
    k->step_began_us = NOW - 30 * MS;
    k->step_us = 100 * MS;
}

/* A window over steps [first, last] of every actor; its id. */
static int64_t add_window(fixture_t *f, int64_t first, int64_t last)
{
    pp_window_spec_t spec;
    pp_selector_t sel;
    pd_plan_out_t out;
    pd_plan_params_t p = {
        .now_us = NOW, .latency_us = 2 * MS, .margin_us = 100 * MS, .default_job = "run"};
    char err[256] = "";
    int64_t *ids;
    size_t nids;
    pp_record_init(&pp_desc_selector, &sel);
    sel.role = "actor";
    sel.all_ranks = true;
    pp_record_init(&pp_desc_window_spec, &spec);
    spec.start = first;
    spec.end = last + 1;
    spec.selectors = &sel;
    spec.selectors_n = 1;
    spec.mode = PP_MODE_E2E;
    spec.tool = "sim";
    if (pd_windows_plan(&f->d.ws, &f->d.reg, &spec, &p, &out, err, sizeof(err)) != 0) {
        fail_msg("plan: %s", err);
    }
    assert_int_equal(
        pd_windows_add(&f->d.ws, &f->d.reg, &spec, &out, f->files.dir, NOW / MS, &ids, &nids), 0);
    assert_int_equal(nids, 1);
    int64_t id = ids[0];
    free(ids);
    return id;
}

/* The coordinator that saved: two actors on two nodes, window 1 over steps
 * 100-101 (pending) and window 2 over 200-200 (done: not kept). */
static void save_state(fixture_t *f)
{
    node_init(f);
    snprintf(f->instance, sizeof(f->instance), INSTANCE);
    add_rank(f, 0, "node1");
    add_rank(f, 1, "node2");
    assert_int_equal(add_window(f, 100, 101), 1);
    assert_int_equal(add_window(f, 200, 200), 2);
    pd_windows_get(&f->d.ws, 2)->state = PP_WS_DONE;
    pd_state_fini(&f->s);
    unit_node_fini(&f->d);
    assert_int_equal(access(f->files.path, R_OK), 0);
}

/* A restarted coordinator reads the file: its return code. */
static int load(fixture_t *f)
{
    node_init(f);
    f->err[0] = '\0';
    return pd_state_load(&f->s, f->err, sizeof(f->err));
}

static void spit(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* ---- tests ---- */

static void test_state_read_back(void **state)
{
    fixture_t *f = *state;
    save_state(f);
    assert_int_equal(load(f), 0);
    assert_string_equal(f->err, "");
    assert_string_equal(f->instance, INSTANCE); /* the same coordinator */
    assert_int_equal(f->d.ws.count, 1);         /* the finished window is not kept */
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    assert_non_null(w);
    assert_null(pd_windows_get(&f->d.ws, 2));
    assert_string_equal(w->name, "w1-steps100-101");
    assert_string_equal(w->job, "run");
    assert_int_equal(w->first, 100);
    assert_int_equal(w->last, 101);
    assert_int_equal(w->state, PP_WS_PENDING);
    assert_string_equal(w->spec.tool, "sim");
    assert_int_equal(w->nmembers, 2);
    assert_int_equal(w->members[0].rank, 0);
    assert_int_equal(w->members[1].rank, 1);
    assert_string_equal(w->members[0].node, "node1");
    assert_string_equal(w->members[1].node, "node2");
    assert_int_equal(w->members[0].state, PP_MS_EXPECTED);
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/run/w1-steps100-101", f->files.dir);
    assert_string_equal(w->dir, dir);
    /* window ids go on past the last run's */
    assert_true(f->d.ws.next_id >= 2);
    unit_node_fini(&f->d);
}

static void test_state_none(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(load(f), 0);
    assert_string_equal(f->instance, ""); /* left to the daemon to draw */
    assert_int_equal(f->d.ws.count, 0);
    unit_node_fini(&f->d);
}

/* What cannot be read back stops the start with the file and the reason. */
static void test_state_corrupt_refused(void **state)
{
    fixture_t *f = *state;
    static const struct {
        const char *text, *why; /* why NULL: the codec's reason */
    } cases[] = {
        {"garbage", NULL},
        {"{\"version\":1,\"instance\":\"" INSTANCE "\",\"windows\":[{\"id\":1}]}", NULL},
        {"{\"version\":2,\"instance\":\"" INSTANCE "\"}", "unknown version or instance"},
        {"{\"version\":1,\"instance\":\"\"}", "unknown version or instance"},
        {"{\"version\":1,\"instance\":\"0123456789012345678901234\"}",
         "unknown version or instance"},
        {"{\"version\":1,\"instance\":\"" INSTANCE "\",\"nodes\":[{\"name\":\"no de\","
         "\"instance\":\"x\"}]}",
         "a node is not valid"},
        {"{\"version\":1,\"instance\":\"" INSTANCE "\",\"windows\":[{\"id\":1,\"name\":\"w1\","
         "\"job\":\"run\",\"dir\":\"/tmp/run/w1\",\"root_len\":4}]}",
         "a window is not valid"}, /* no state */
        {"{\"version\":1,\"instance\":\"" INSTANCE "\",\"windows\":[{\"id\":1,\"name\":\"w1\","
         "\"job\":\"run\",\"state\":\"pending\",\"dir\":\"/etc/passwd/x\",\"root_len\":4}]}",
         "a window's folder is not <save_path>/<job>/<window>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[256], want[700];
        if (cases[i].why == NULL) {
            pp_state_t st;
            assert_int_not_equal(pp_record_decode(&pp_desc_state, cases[i].text,
                                                  strlen(cases[i].text), &st, why, sizeof(why)),
                                 0);
        } else {
            snprintf(why, sizeof(why), "%s", cases[i].why);
        }
        snprintf(want, sizeof(want), "coordinator state %s: %s" AGAIN, f->files.path, why);
        spit(f->files.path, cases[i].text);
        int rv = load(f);
        if (rv != PROFD_ECONFIG || strcmp(f->err, want) != 0) {
            fail_msg("case %zu: %d '%s', want %d '%s'", i, rv, f->err, PROFD_ECONFIG, want);
        }
        assert_int_equal(f->d.ws.count, 0);
        unit_node_fini(&f->d);
    }
}

int main(void)
{
    return PD_RUN_EACH(setup, unit_dir_teardown, test_state_read_back, test_state_none,
                       test_state_corrupt_refused);
}
