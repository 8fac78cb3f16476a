// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Registry: ids, re-registration, limits, step events and step times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "registry.h"

static pp_hello_t hello(const char *role, int64_t rank, int64_t replica, int64_t pid)
{
    pp_hello_t h;
    pp_record_init(&pp_desc_hello, &h);
    h.job = "run";
    h.role = (char *)role;
    h.rank = rank;
    h.replica_rank = replica;
    h.host = "node1";
    h.pid = pid;
    h.world_size = 8;
    return h;
}

/* Actor `rank` of process `pid` registered by node `node` at now_ms: its
 * entry. */
static pd_rank_t *add_actor(pd_registry_t *r, int64_t rank, int64_t pid, const char *node,
                            int64_t now_ms)
{
    pd_rank_t *k;
    pp_hello_t h = hello("actor", rank, PP_NONE, pid);
    assert_int_equal(pd_registry_add(r, &h, node, now_ms, &k), 0);
    return k;
}

/* r new, 4 ranks at most, with that one actor in it. */
static pd_rank_t *with_actor(pd_registry_t *r, int64_t rank, int64_t pid, const char *node,
                             int64_t now_ms)
{
    pd_registry_init(r, 4);
    return add_actor(r, rank, pid, node, now_ms);
}

/* Names are kept once: ranks of one job on one host point to the same
 * copy (not a buffer each), which outlives the rank that brought it; a
 * name over PP_MAX_NAME is still refused. */
static void test_registry_names_interned(void **state)
{
    (void)state;
    pd_registry_t r;
    pd_rank_t *a, *b, *c;
    char job[] = "run";
    pd_registry_init(&r, 4);
    pp_hello_t ha = hello("actor", 0, PP_NONE, 100);
    pp_hello_t hb = hello("actor", 1, PP_NONE, 101);
    pp_hello_t hc = hello("rollout", 2, PP_NONE, 102);
    ha.job = job; /* a buffer of the caller's: the registry keeps a copy */
    hc.host = "node2";
    assert_int_equal(pd_registry_add(&r, &ha, "n1", 1000, &a), 0);
    job[0] = 'X';
    assert_int_equal(pd_registry_add(&r, &hb, "n1", 1000, &b), 0);
    assert_int_equal(pd_registry_add(&r, &hc, NULL, 1000, &c), 0);
    assert_string_equal(a->job, "run");
    assert_ptr_equal(a->job, b->job);
    assert_ptr_equal(a->job, c->job);
    assert_ptr_equal(a->role, b->role);
    assert_ptr_equal(a->host, b->host);
    assert_ptr_equal(a->node, b->node);
    assert_string_equal(c->role, "rollout");
    assert_string_equal(c->host, "node2");
    assert_string_equal(c->node, "");
    assert_ptr_equal(c->cn, a->cn); /* "" */
    assert_ptr_equal(pd_registry_name(&r, "node2"), c->host);
    const char *host = a->host;
    pd_registry_remove(&r, a->id);
    assert_string_equal(b->host, "node1");
    assert_ptr_equal(b->host, host);
    pp_hello_t hl = hello("actor", 3, PP_NONE, 103);
    char longname[PP_MAX_NAME + 2];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    hl.host = longname;
    assert_int_equal(pd_registry_add(&r, &hl, "n1", 1000, &a), PROFD_EINVAL);
    pd_registry_fini(&r);
}

static void test_registry_add_get_remove(void **state)
{
    pd_registry_t r;
    pd_rank_t *a, *b;
    pd_registry_init(&r, 4);
    pp_hello_t ha = hello("actor", 0, PP_NONE, 100);
    pp_hello_t hb = hello("rollout", 1, 0, 101);
    assert_int_equal(pd_registry_add(&r, &ha, "n1", 1000, &a), 0);
    assert_int_equal(pd_registry_add(&r, &hb, "n1", 1000, &b), 0);
    assert_int_not_equal(a->id, b->id);
    assert_ptr_equal(pd_registry_get(&r, a->id), a);
    assert_ptr_equal(pd_registry_get(&r, b->id), b);
    assert_int_equal(r.count, 2);
    assert_int_equal(a->step, PP_NONE);
    assert_int_equal(b->replica_rank, 0);
    assert_string_equal(b->node, "n1");

    int64_t old = a->id;
    pd_registry_remove(&r, old);
    assert_null(pd_registry_get(&r, old));
    assert_int_equal(r.count, 1);
    /* the slot is reused under a new generation: the old id stays dead */
    pd_rank_t *c;
    pp_hello_t hc = hello("ref", 2, PP_NONE, 102);
    assert_int_equal(pd_registry_add(&r, &hc, "n1", 1000, &c), 0);
    assert_int_not_equal(c->id, old);
    assert_null(pd_registry_get(&r, old));
    assert_null(pd_registry_get(&r, 0));
    assert_null(pd_registry_get(&r, -5));
    assert_null(pd_registry_get(&r, 12345));
    pd_registry_fini(&r);
}

static void test_registry_same_process_gets_its_entry_back(void **state)
{
    pd_registry_t r;
    pd_rank_t *a = with_actor(&r, 0, 100, "n1", 1000);
    a->state = PD_RANK_LOST;
    pd_rank_t *again = add_actor(&r, 0, 100, "n1", 2000);
    assert_ptr_equal(again, a);
    assert_int_equal(again->state, PD_RANK_ACTIVE);
    assert_int_equal(again->last_seen_ms, 2000);
    assert_int_equal(r.count, 1);
    /* another pid is another process */
    again = add_actor(&r, 0, 200, "n1", 2000);
    assert_ptr_not_equal(again, a);
    assert_int_equal(r.count, 2);
    pd_registry_fini(&r);
}

static void test_registry_limits_and_validation(void **state)
{
    pd_registry_t r;
    pd_rank_t *k = NULL;
    pd_registry_init(&r, 2);
    pp_hello_t h = hello("actor", 0, PP_NONE, 100);
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), 0);
    h.pid = 101;
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), 0);
    h.pid = 102;
    k = NULL;
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), PROFD_ELIMIT);
    assert_null(k);

    pp_hello_t bad = hello("ac/tor", 0, PP_NONE, 1);
    assert_int_equal(pd_registry_add(&r, &bad, "n", 0, &k), PROFD_EINVAL);
    bad = hello("actor", -1, PP_NONE, 1);
    assert_int_equal(pd_registry_add(&r, &bad, "n", 0, &k), PROFD_EINVAL);
    bad = hello("actor", 0, -2, 1);
    assert_int_equal(pd_registry_add(&r, &bad, "n", 0, &k), PROFD_EINVAL);
    bad = hello("actor", 0, PP_NONE, 0);
    assert_int_equal(pd_registry_add(&r, &bad, "n", 0, &k), PROFD_EINVAL);
    bad = hello("actor", 0, PP_NONE, 1);
    bad.host = "../etc";
    assert_int_equal(pd_registry_add(&r, &bad, "n", 0, &k), PROFD_EINVAL);
    assert_int_equal(r.count, 2);
    pd_registry_fini(&r);
}

/* A rank whose first step has ended has a step time (begin to end) before
 * its second begins: what profctl status shows as P50_MS is what --next
 * plans with (CI at 08616ee planned from step + 1 in that gap). The second
 * begin replaces it with a begin-to-begin sample. */
static void test_registry_first_step_end(void **state)
{
    pd_registry_t r;
    pd_rank_t *k = with_actor(&r, 0, 100, "n", 0);

    int64_t begin[] = {1, 0, 2000000};
    assert_int_equal(pd_registry_events(k, begin, 3, 50), 0);
    assert_int_equal(k->step_us, 0);
    int64_t other_end[] = {2, 7, 2500000};
    assert_int_equal(pd_registry_events(k, other_end, 3, 50), 0);
    assert_int_equal(k->step_us, 0);
    int64_t end[] = {2, 0, 2300000};
    assert_int_equal(pd_registry_events(k, end, 3, 60), 0);
    assert_int_equal(k->step_us, 300000);
    assert_int_equal(k->nrecent, 0);
    int64_t next[] = {1, 1, 2400000};
    assert_int_equal(pd_registry_events(k, next, 3, 70), 0);
    assert_int_equal(k->step_us, 400000);
    assert_int_equal(k->nrecent, 1);
    /* a later end does not replace the measured time */
    int64_t end1[] = {2, 1, 2410000};
    assert_int_equal(pd_registry_events(k, end1, 3, 80), 0);
    assert_int_equal(k->step_us, 400000);
    pd_registry_fini(&r);
}

static void test_registry_events_step_time(void **state)
{
    pd_registry_t r;
    pd_rank_t *k = with_actor(&r, 3, 100, "n", 0);

    int64_t ev1[] = {1, 1, 1000000, 2, 1, 1090000, 1, 2, 1100000};
    assert_int_equal(pd_registry_events(k, ev1, 9, 50), 0);
    assert_int_equal(k->step, 2);
    assert_true(k->in_step);
    assert_int_equal(k->step_began_us, 1100000);
    assert_int_equal(k->step_us, 100000);
    assert_int_equal(k->events, 3);
    assert_int_equal(k->last_seen_ms, 50);

    /* two steps in 400 ms: 200 ms each; the median of {100, 200} ms is
     * the upper one */
    int64_t ev2[] = {2, 2, 1150000, 1, 4, 1500000};
    assert_int_equal(pd_registry_events(k, ev2, 6, 60), 0);
    assert_int_equal(k->step, 4);
    assert_int_equal(k->step_us, 200000);
    /* one very slow step does not swing the median of {100, 200, 5000} */
    int64_t slow[] = {2, 4, 1600000, 1, 5, 6500000};
    assert_int_equal(pd_registry_events(k, slow, 6, 60), 0);
    assert_int_equal(k->nrecent, 3);
    assert_int_equal(k->step_us, 200000);
    k->step = 4; /* rewind for the checks below */
    k->step_began_us = 1500000;

    int64_t ev3[] = {2, 4, 1600000};
    assert_int_equal(pd_registry_events(k, ev3, 3, 70), 0);
    assert_false(k->in_step);

    /* bad input: unknown kind, incomplete triple; the valid prefix counts */
    int64_t bad[] = {1, 5, 1700000, 9, 6, 1800000};
    assert_int_equal(pd_registry_events(k, bad, 6, 80), PROFD_EPROTO);
    assert_int_equal(k->step, 5);
    int64_t part[] = {2, 5, 1750000, 1};
    assert_int_equal(pd_registry_events(k, part, 4, 90), PROFD_EPROTO);
    assert_false(k->in_step);

    pp_rank_t row;
    pd_registry_row(k, 1090, &row);
    assert_int_equal(row.rank, 3);
    assert_int_equal(row.step, 5);
    assert_string_equal(pp_enum_name(&pp_enum_rank_activity, row.state), "idle");
    assert_int_equal(row.age_ms, 1000);
    assert_true(row.rate > 0.0);
    pd_registry_fini(&r);
}

/* Events arrive from any local process: steps out of [0, 2^53) and negative
 * times are refused whole, and nothing overflows (the codec bounds every
 * integer to |n| < 2^53; the registry is called with anything). */
static void test_registry_events_bounded(void **state)
{
    pd_registry_t r;
    pd_rank_t *k = with_actor(&r, 3, 100, "n", 0);
    int64_t ok[] = {1, 40, 1000000};
    assert_int_equal(pd_registry_events(k, ok, 3, 10), 0);

    static const struct {
        int64_t ev[3], now_ms;
    } refused[] = {
        {{1, INT64_MAX - 1, 2000000}, 20},          /* step: huge */
        {{1, -9200000000000000000LL, 3000000}, 30}, /* negative */
        {{1, 1LL << 53, 3000000}, 30},              /* 2^53 */
        {{1, 41, -9200000000000000000LL}, 40},      /* time: negative */
        {{1, 41, INT64_MAX}, 40},                   /* huge */
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        assert_int_equal(pd_registry_events(k, refused[i].ev, 3, refused[i].now_ms), PROFD_EPROTO);
    }
    assert_int_equal(k->step, 40);
    assert_int_equal(k->step_began_us, 1000000);
    assert_int_equal(k->step_us, 0);

    /* a time far ahead, then the largest step there is: no overflow */
    int64_t far[] = {1, 41, (1LL << 53) - 1};
    assert_int_equal(pd_registry_events(k, far, 3, 50), 0);
    assert_int_equal(k->step_us, (1LL << 53) - 1 - 1000000);
    int64_t edge[] = {1, (1LL << 53) - 1, (1LL << 53) - 1};
    assert_int_equal(pd_registry_events(k, edge, 3, 50), 0);
    assert_int_equal(k->step, (1LL << 53) - 1);
    pd_registry_fini(&r);
}

/* A registration is bound to who made it (pd_owner_t): its uid and process
 * over ipc://, its certificate's name over tls+tcp://; a job to the uid
 * (or certificate) of its first rank unless shared_jobs; at most
 * max_per_peer registrations per uid, certificate or connection. */
static void test_registry_bound_to_owner(void **state)
{
    pd_registry_t r;
    pd_rank_t *k, *again;
    char err[256];
    pd_registry_init(&r, 64);
    const pd_owner_t victim = {.uid = 1000, .pid = 4242, .cn = NULL, .pipe = 7};
    const pd_owner_t root = {.uid = 0, .pid = 5555, .cn = NULL, .pipe = 8};
    const pd_owner_t sibling = {.uid = 1000, .pid = 4343, .cn = NULL, .pipe = 9};
    const pd_owner_t victim_later = {.uid = 1000, .pid = 4242, .cn = NULL, .pipe = 10};
    pp_hello_t h = hello("actor", 0, PP_NONE, 77);
    assert_int_equal(pd_registry_register(&r, &h, "n", &victim, 0, &k, err, sizeof(err)), 0);
    assert_int_equal(k->uid, 1000);
    assert_int_equal(k->peer_pid, 4242);

    assert_int_equal(pd_registry_register(&r, &h, "n", &root, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "rank 0 of job run (pid 77) is registered by uid 1000: another uid "
                             "may not register it again");
    assert_int_equal(pd_registry_register(&r, &h, "n", &sibling, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "rank 0 of job run (pid 77) is registered by another process (pid "
                             "4242): only that process may register it again");
    /* the process itself, over a new connection */
    assert_int_equal(pd_registry_register(&r, &h, "n", &victim_later, 0, &again, err, sizeof(err)),
                     0);
    assert_ptr_equal(again, k);

    /* the job is uid 1000's */
    pp_hello_t other = hello("actor", 1, PP_NONE, 88);
    assert_int_equal(pd_registry_register(&r, &other, "n", &root, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "job run belongs to uid 1000: another uid may not register ranks of "
                             "it (security.shared_jobs)");
    assert_int_equal(r.count, 1);
    assert_int_equal(pd_registry_register(&r, &other, "n", &sibling, 0, &again, err, sizeof(err)),
                     0);
    r.shared_jobs = true;
    pp_hello_t third = hello("ref", 2, PP_NONE, 99);
    assert_int_equal(pd_registry_register(&r, &third, "n", &root, 0, &again, err, sizeof(err)), 0);
    assert_int_equal(again->uid, 0);
    /* still not a registration of another uid */
    assert_int_equal(pd_registry_register(&r, &h, "n", &root, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    /* no credentials (plain tcp://, a coordinator's remote rank): no owner */
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &again), 0);
    assert_ptr_equal(again, k);

    /* certificates: bound to the name; with job_cn the name is the job */
    const pd_owner_t alice = {.uid = -1, .pid = -1, .cn = "alice", .pipe = 20};
    const pd_owner_t bob = {.uid = -1, .pid = -1, .cn = "bob", .pipe = 21};
    pp_hello_t ha = hello("actor", 0, PP_NONE, 500);
    ha.job = "alice";
    r.shared_jobs = false;
    assert_int_equal(pd_registry_register(&r, &ha, "n", &alice, 0, &k, err, sizeof(err)), 0);
    assert_string_equal(k->cn, "alice");
    assert_int_equal(k->uid, -1);
    assert_int_equal(pd_registry_register(&r, &ha, "n", &bob, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "rank 0 of job alice (pid 500) is registered with certificate "
                             "'alice': another may not register it again");
    pp_hello_t hb = hello("actor", 1, PP_NONE, 501);
    hb.job = "alice";
    assert_int_equal(pd_registry_register(&r, &hb, "n", &bob, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "job alice belongs to certificate 'alice': another may not register "
                             "ranks of it (security.shared_jobs)");
    r.job_cn = true;
    hb.job = "other";
    assert_int_equal(pd_registry_register(&r, &hb, "n", &bob, 0, &again, err, sizeof(err)),
                     PROFD_EPERM);
    assert_string_equal(err, "certificate 'bob' may register ranks of job bob only, not of job "
                             "other (security.job_certificates)");
    hb.job = "bob";
    assert_int_equal(pd_registry_register(&r, &hb, "n", &bob, 0, &again, err, sizeof(err)), 0);
    pd_registry_fini(&r);

    /* at most max_per_peer per uid, certificate or connection */
    pd_registry_init(&r, 64);
    r.max_per_peer = 2;
    const pd_owner_t tcp = {.uid = -1, .pid = -1, .cn = NULL, .pipe = 30};
    const pd_owner_t tcp2 = {.uid = -1, .pid = -1, .cn = NULL, .pipe = 31};
    for (int i = 0; i < 3; i++) {
        pp_hello_t x = hello("actor", i, PP_NONE, 600 + i);
        int want = i < 2 ? 0 : PROFD_ELIMIT;
        assert_int_equal(pd_registry_register(&r, &x, "n", &victim, 0, &k, err, sizeof(err)), want);
        x.job = "tcpjob";
        assert_int_equal(pd_registry_register(&r, &x, "n", &tcp, 0, &k, err, sizeof(err)), want);
    }
    assert_string_equal(err, "this connection already holds 2 registrations "
                             "(limits.max_clients_per_peer)");
    pp_hello_t x = hello("actor", 9, PP_NONE, 609);
    assert_int_equal(pd_registry_register(&r, &x, "n", &victim, 0, &k, err, sizeof(err)),
                     PROFD_ELIMIT);
    assert_string_equal(err,
                        "uid 1000 already holds 2 registrations (limits.max_clients_per_peer)");
    x.job = "tcpjob";
    assert_int_equal(pd_registry_register(&r, &x, "n", &tcp2, 0, &k, err, sizeof(err)), 0);
    /* registering again is not a new registration */
    pp_hello_t first = hello("actor", 0, PP_NONE, 600);
    assert_int_equal(pd_registry_register(&r, &first, "n", &victim, 0, &k, err, sizeof(err)), 0);
    assert_int_equal(r.count, 5);
    pd_registry_fini(&r);
}

/* A daemon's own stall is credited: every rank was last seen that much
 * later, whatever it was before. */
static void test_registry_credit_stall(void **state)
{
    pd_registry_t r;
    pd_rank_t *a = with_actor(&r, 0, 100, "n1", 1000);
    pd_rank_t *b = add_actor(&r, 1, 101, "n1", 4000);
    b->state = PD_RANK_LOST;
    pd_registry_credit(&r, 10016);
    assert_int_equal(a->last_seen_ms, 11016);
    assert_int_equal(b->last_seen_ms, 14016);
    assert_int_equal(b->state, PD_RANK_LOST); /* the credit revives nobody */
    pd_registry_credit(&r, 0);
    assert_int_equal(a->last_seen_ms, 11016);
    pd_registry_fini(&r);
    (void)state;
}

static void test_registry_iteration(void **state)
{
    pd_registry_t r;
    pd_rank_t *k;
    pd_registry_init(&r, 200);
    for (int i = 0; i < 100; i++) {
        pp_hello_t h = hello("actor", i, PP_NONE, 1000 + i);
        assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), 0);
    }
    int n = 0;
    int64_t sum = 0;
    for (k = pd_registry_next(&r, NULL); k; k = pd_registry_next(&r, k)) {
        n++;
        sum += k->rank;
    }
    assert_int_equal(n, 100);
    assert_int_equal(sum, 4950);
    pd_registry_fini(&r);
}

/* One process, several roles: the hello's roles, each with its rank in
 * that role's own numbering. */
static void test_registry_roles_of_a_process(void **state)
{
    typedef struct role_case {
        const char *name;
        pp_role_rank_t roles[4];
        size_t n;
        int rv;
        const char *want; /* "role:rank,..." */
    } role_case_t;
    static const role_case_t cases[] = {
        {"one role", {{0}}, 0, 0, "actor:2"},
        {"verl's hybrid engine",
         {{"rollout", PP_NONE}, {"ref", PP_NONE}},
         2,
         0,
         "actor:2,rollout:2,ref:2"},
        {"a role numbered on its own", {{"critic", 0}}, 1, 0, "actor:2,critic:0"},
        {"the primary listed with its own rank",
         {{"actor", 5}, {"ref", PP_NONE}},
         2,
         0,
         "actor:5,ref:2"},
        {"the primary listed without a rank", {{"actor", PP_NONE}}, 1, 0, "actor:2"},
        {"listed twice", {{"ref", 0}, {"ref", 1}}, 2, PROFD_EINVAL, NULL},
        {"the primary listed twice", {{"actor", 5}, {"actor", 6}}, 2, PROFD_EINVAL, NULL},
        {"not a name", {{"re/f", 0}}, 1, PROFD_EINVAL, NULL},
        {"negative rank", {{"ref", -3}}, 1, PROFD_EINVAL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const role_case_t *c = &cases[i];
        pd_registry_t r;
        pd_rank_t *k = NULL;
        char got[256] = "";
        pd_registry_init(&r, 4);
        pp_hello_t h = hello("actor", 2, PP_NONE, 100);
        h.roles = (pp_role_rank_t *)c->roles;
        h.roles_n = c->n;
        int rv = pd_registry_add(&r, &h, "n1", 0, &k);
        if (rv != c->rv) {
            fail_msg("%s: %d, want %d", c->name, rv, c->rv);
        }
        if (rv == 0) {
            for (size_t j = 0; j < k->nroles; j++) {
                size_t len = strlen(got);
                snprintf(got + len, sizeof(got) - len, "%s%s:%lld", j ? "," : "", k->roles[j].name,
                         (long long)k->roles[j].rank);
            }
            if (strcmp(got, c->want) != 0) {
                fail_msg("%s: %s, want %s", c->name, got, c->want);
            }
        } else {
            assert_null(k);
            assert_int_equal(r.count, 0);
        }
        pd_registry_fini(&r);
    }

    /* more than PP_MAX_ROLES */
    pd_registry_t r;
    pd_rank_t *k = NULL;
    pp_role_rank_t many[PP_MAX_ROLES];
    char names[PP_MAX_ROLES][8];
    pd_registry_init(&r, 4);
    for (int i = 0; i < PP_MAX_ROLES; i++) {
        snprintf(names[i], sizeof(names[i]), "r%d", i);
        many[i] = (pp_role_rank_t){names[i], i};
    }
    pp_hello_t h = hello("actor", 0, PP_NONE, 100);
    h.roles = many;
    h.roles_n = PP_MAX_ROLES - 1;
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), 0);
    assert_int_equal(k->nroles, PP_MAX_ROLES);
    h.pid = 101;
    h.roles_n = PP_MAX_ROLES;
    assert_int_equal(pd_registry_add(&r, &h, "n", 0, &k), PROFD_EINVAL);
    pd_registry_fini(&r);
}

/* A process that adds a role registers again: the same entry, more roles,
 * visible to the planner and in status. */
static void test_registry_added_role_same_entry(void **state)
{
    pd_registry_t r;
    pd_rank_t *k, *again;
    pd_plan_rank_t pr;
    pp_rank_t row;
    pd_registry_init(&r, 4);
    pp_hello_t h = hello("actor", 1, PP_NONE, 100);
    assert_int_equal(pd_registry_add(&r, &h, "n1", 0, &k), 0);
    assert_int_equal(k->nroles, 1);
    pd_registry_row(k, 0, &row);
    assert_null(row.roles); /* one role: no list */
    pp_role_rank_t more[] = {{"rollout", PP_NONE}, {"critic", 0}};
    h.roles = more;
    h.roles_n = 2;
    assert_int_equal(pd_registry_add(&r, &h, "n1", 10, &again), 0);
    assert_ptr_equal(again, k);
    assert_int_equal(r.count, 1);
    assert_int_equal(k->nroles, 3);
    assert_int_equal(pd_registry_role(k, "critic"), 2);
    assert_int_equal(pd_registry_role(k, "ref"), -1);
    pd_registry_plan_rank(k, &pr);
    assert_int_equal(pr.nroles, 3);
    assert_string_equal(pr.roles[1].name, "rollout");
    assert_int_equal(pr.roles[1].rank, 1);
    assert_int_equal(pr.roles[2].rank, 0);
    pd_registry_row(k, 10, &row);
    assert_int_equal(row.roles_n, 3);
    assert_string_equal(row.roles[2].role, "critic");
    assert_int_equal(row.roles[2].rank, 0);
    free(row.roles);
    pd_registry_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_add_get_remove),
        cmocka_unit_test(test_registry_names_interned),
        cmocka_unit_test(test_registry_same_process_gets_its_entry_back),
        cmocka_unit_test(test_registry_limits_and_validation),
        cmocka_unit_test(test_registry_first_step_end),
        cmocka_unit_test(test_registry_events_step_time),
        cmocka_unit_test(test_registry_events_bounded),
        cmocka_unit_test(test_registry_bound_to_owner),
        cmocka_unit_test(test_registry_credit_stall),
        cmocka_unit_test(test_registry_iteration),
        cmocka_unit_test(test_registry_roles_of_a_process),
        cmocka_unit_test(test_registry_added_role_same_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
