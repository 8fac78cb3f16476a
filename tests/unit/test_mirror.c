// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * cluster/mirror.c against what mirror.h promises, through the window
 * table's hooks (recorded here) and a late-joiner callback of the test's:
 * a node plan from the coordinator creates a mirror window with the node's
 * selected workers as members (unknown clients passed over), applying it
 * again changes nothing, a stop and a late joiner are applied, a window
 * the coordinator no longer lists is cancelled, a worker added to a window
 * the node has finished is a member that missed it, and after the
 * coordinator restarted the running mirrors are cancelled and its window
 * ids match none of them. Plans are written as the coordinator sends them
 * (JSON) and decoded.
 */
#include "unit_fixture.h"

#include "mirror.h"
#include "node_fixture.h"

typedef struct fixture {
    unit_node_t d;
    int64_t id[3]; /* actor 0, actor 1, rollout 2 */
    int changed;   /* the table's hooks */
    int late;      /* the late-joiner callback */
    pd_member_t *late_m;
} fixture_t;

static void on_changed(void *arg)
{
    ((fixture_t *)arg)->changed++;
}

static void on_dirty(void *arg)
{
    (void)arg;
}

static void on_late(void *arg, pd_window_t *w, pd_member_t *m)
{
    fixture_t *f = arg;
    (void)w;
    f->late++;
    f->late_m = m;
}

static int64_t add_rank(fixture_t *f, const char *role, int64_t rank)
{
    pd_rank_t *k;
    assert_int_equal(unit_node_add(&f->d, role, rank, "h1", "node1", &k), 0);
    return k->id;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    unit_node_init(&f->d, "node1", "/save", 8);
    f->d.ws.hooks.changed = on_changed;
    f->d.ws.hooks.dirty = on_dirty;
    f->d.ws.hooks.arg = f;
    f->id[0] = add_rank(f, "actor", 0);
    f->id[1] = add_rank(f, "actor", 1);
    f->id[2] = add_rank(f, "rollout", 2);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    unit_node_fini(&f->d);
    free(f);
    return 0;
}

/* Apply the plan written in `json` (%lld: the fixture's ids in order, as
 * many as it names). */
static void apply(fixture_t *f, const char *json, bool with_late)
{
    char text[2048], err[256];
    pp_node_plan_t plan;
    snprintf(text, sizeof(text), json, (long long)f->id[0], (long long)f->id[1],
             (long long)f->id[2]);
    if (pp_record_decode(&pp_desc_node_plan, text, strlen(text), &plan, err, sizeof(err)) != 0) {
        fail_msg("plan %s: %s", text, err);
    }
    pd_mirror_apply(&f->d.n, &plan, with_late ? on_late : NULL, f);
    pp_record_free(&pp_desc_node_plan, &plan);
}

static size_t nwindows(const fixture_t *f)
{
    size_t n = 0;
    for (pd_window_t *w = f->d.ws.head; w; w = w->next) {
        n++;
    }
    return n;
}

#define ENTRY(window, name, last, clients)                                                         \
    "{\"entry\":{\"window\":" #window ",\"name\":\"" name "\",\"job\":\"run\",\"first_step\":5,"   \
    "\"last_step\":" #last ",\"tool\":\"sim\",\"mode\":\"e2e\"},\"clients\":" clients "}"
#define PLAN(...) "{\"gen\":1,\"entries\":[" __VA_ARGS__ "]}"

/* Window 7 over step 5 for actor 0, as the coordinator plans it, applied:
 * the first mirror. */
static pd_window_t *plan_w7(fixture_t *f)
{
    apply(f, PLAN(ENTRY(7, "w7-step5", 5, "[%lld]")), true);
    return f->d.ws.head;
}

/* ---- tests ---- */

static void test_mirror_new_window(void **state)
{
    fixture_t *f = *state;
    /* two of the node's workers and one it does not know */
    apply(f, PLAN(ENTRY(7, "w7-step5", 6, "[%lld,%lld,99999]")), true);
    assert_int_equal(nwindows(f), 1);
    pd_window_t *w = f->d.ws.head;
    assert_string_equal(w->name, "w7-step5");
    assert_string_equal(w->job, "run");
    assert_int_equal(w->first, 5);
    assert_int_equal(w->last, 6);
    assert_int_equal(w->state, PP_WS_PENDING);
    assert_string_equal(w->dir, "/save/run/w7-step5");
    assert_int_equal(w->nmembers, 2);
    assert_non_null(pd_windows_member(w, f->id[0]));
    assert_non_null(pd_windows_member(w, f->id[1]));
    assert_null(pd_windows_member(w, f->id[2]));
    assert_int_equal(w->spec.selectors_n, 1);
    assert_string_equal(w->spec.selectors[0].tool, "sim");
    assert_int_equal(w->spec.selectors[0].mode, PP_MODE_E2E);
    assert_int_equal(f->changed, 1);
    assert_int_equal(f->late, 0);

    /* the same plan again: nothing new */
    apply(f, PLAN(ENTRY(7, "w7-step5", 6, "[%lld,%lld,99999]")), true);
    assert_int_equal(nwindows(f), 1);
    assert_int_equal(f->d.ws.head->nmembers, 2);
    assert_int_equal(f->d.ws.head->spec.selectors_n, 1);
    assert_int_equal(f->changed, 1);
}

/* A job or a name the node could not make a folder of: no window. */
static void test_mirror_refuses_bad_names(void **state)
{
    fixture_t *f = *state;
    char plan[1024], name[PP_MAX_NAME + 2];
    memset(name, 'w', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    apply(f,
          PLAN("{\"entry\":{\"window\":1,\"name\":\"w1\",\"job\":\"../etc\",\"first_step\":5},"
               "\"clients\":[%lld]}"),
          true);
    snprintf(plan, sizeof(plan),
             PLAN("{\"entry\":{\"window\":2,\"name\":\"%s\",\"job\":\"run\",\"first_step\":5},"
                  "\"clients\":[%%lld]}"),
             name);
    apply(f, plan, true);
    assert_int_equal(nwindows(f), 0);
    assert_int_equal(f->changed, 0);
}

static void test_mirror_stop_and_late_joiner(void **state)
{
    fixture_t *f = *state;
    apply(f, PLAN(ENTRY(7, "w7-steps5-9", 9, "[%lld]")), true);
    pd_window_t *w = f->d.ws.head;
    assert_int_equal(w->last, 9);
    assert_int_equal(w->nmembers, 1);
    /* stopped at step 6 by the coordinator, and rank 1 joins */
    apply(f, PLAN(ENTRY(7, "w7-steps5-9", 6, "[%lld,%lld]")), true);
    assert_int_equal(nwindows(f), 1);
    assert_int_equal(w->last, 6);
    assert_int_equal(w->nmembers, 2);
    assert_int_equal(pd_windows_member(w, f->id[1])->state, PP_MS_EXPECTED);
    assert_int_equal(f->changed, 2);
    assert_int_equal(f->late, 0); /* the window still runs: not late */
}

static void test_mirror_dropped_window_cancelled(void **state)
{
    fixture_t *f = *state;
    apply(f, PLAN(ENTRY(7, "w7-step5", 5, "[%lld]") "," ENTRY(8, "w8-step7", 7, "[%lld]")), true);
    assert_int_equal(nwindows(f), 2);
    pd_window_t *w7 = f->d.ws.head, *w8 = w7->next;
    assert_string_equal(w8->name, "w8-step7");
    apply(f, PLAN(ENTRY(8, "w8-step7", 7, "[%lld]")), true);
    assert_int_equal(w7->state, PP_WS_CANCELLED);
    assert_string_equal(w7->reason, "cancelled by the coordinator");
    assert_int_equal(w8->state, PP_WS_PENDING);
    assert_int_equal(f->changed, 2);
    /* listed again later: a cancelled mirror is not revived */
    apply(f, PLAN(ENTRY(7, "w7-step5", 5, "[%lld,%lld]") "," ENTRY(8, "w8-step7", 7, "[%lld]")),
          true);
    assert_int_equal(nwindows(f), 2);
    assert_int_equal(w7->state, PP_WS_CANCELLED);
    assert_int_equal(w7->nmembers, 1);
}

/* A worker the coordinator adds to a window this node has finished: a
 * member that missed it, with the reason; without a late callback nothing
 * is added. */
static void test_mirror_joined_after_finish(void **state)
{
    fixture_t *f = *state;
    pd_window_t *w = plan_w7(f);
    w->state = PP_WS_DONE; /* finished here */
    apply(f, PLAN(ENTRY(7, "w7-step5", 5, "[%lld,%lld]")), false);
    assert_int_equal(w->nmembers, 1);
    apply(f, PLAN(ENTRY(7, "w7-step5", 5, "[%lld,%lld]")), true);
    assert_int_equal(w->nmembers, 2);
    pd_member_t *m = pd_windows_member(w, f->id[1]);
    assert_non_null(m);
    assert_int_equal(m->state, PP_MS_REPORTED);
    assert_int_equal(m->ncaps, 1);
    assert_int_equal(m->caps[0].status, PP_CAP_MISSED);
    assert_string_equal(m->caps[0].role, "e2e");
    assert_string_equal(m->caps[0].reason, "joined window w7-step5 after its node had finished it");
    assert_int_equal(m->caps[0].first_step, 5);
    assert_int_equal(w->state, PP_WS_DONE);
    /* not forwarded yet: the missed capture goes with the window's results */
    assert_int_equal(f->late, 0);
}

/* The coordinator restarted: its running windows are cancelled here, and
 * its new window 7 is a new mirror, not the old one. */
static void test_mirror_reset(void **state)
{
    fixture_t *f = *state;
    pd_window_t *old = plan_w7(f);
    int changed = f->changed;
    pd_mirror_reset(&f->d.n);
    assert_int_equal(old->state, PP_WS_CANCELLED);
    assert_string_equal(old->reason, "the coordinator restarted");
    assert_int_equal(f->changed, changed + 1);
    plan_w7(f);
    assert_int_equal(nwindows(f), 2);
    pd_window_t *w = old->next;
    assert_non_null(w);
    assert_int_equal(w->state, PP_WS_PENDING);
    assert_true(w->id > old->id); /* a local id of its own */
    assert_int_equal(w->nmembers, 1);
    assert_int_equal(old->state, PP_WS_CANCELLED);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_mirror_new_window, test_mirror_refuses_bad_names,
                       test_mirror_stop_and_late_joiner, test_mirror_dropped_window_cancelled,
                       test_mirror_joined_after_finish, test_mirror_reset);
}
