// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A coordinator's state on disk: its journal (node/journal.c in the
 * coordinator's role, docs/store.md), against what journal.h promises:
 * what the journal holds at pd_journal_fini (the instance, the next window
 * id, every unfinished window with its members; a finished one is not
 * kept) a restarted coordinator reads back; the node daemons it knew, the
 * later record of a node replacing the earlier and a node gone for good
 * not awaited again; the files still arriving, each from its .part; the
 * members of remote ranks unbound until their nodes register again; no
 * file is no state; a record that cannot be read back stops the start
 * (PROFD_ECONFIG) with one line naming the file, the line and what is
 * wrong, rather than lose it. A coordinator from before the journal
 * imports its whole-state file (.profd-coordinator.json) once, refusing
 * one it cannot read as it did. No loop runs; the node list is the
 * fixture's.
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit_fixture.h"

#include "journal.h"
#include "node_fixture.h"

#define INSTANCE "c0ffee0123456789"
#define AGAIN    " (move the file away to start afresh)"
#define MS       1000LL
#define NOW      (1000000 * MS) /* us */
#define HEAD     "{\"kind\":\"head\",\"head\":{\"version\":1,\"instance\":\"" INSTANCE "\"}}\n"

typedef struct fixture {
    unit_dir_t files; /* first: unit_dir_setup */
    unit_node_t d;
    char instance[24];
    pd_journal_loaded_t l;
    char restored[4][2][64]; /* the nodes the journal gave back: name, instance */
    size_t nrestored;
    char err[512];
} fixture_t;

/* The node list: the nodes the journal gave back (a snapshot writes
 * them). */
static bool node_at(void *arg, size_t i, const char **name, const char **instance)
{
    fixture_t *f = arg;
    if (i >= f->nrestored) {
        return false;
    }
    *name = f->restored[i][0];
    *instance = f->restored[i][1];
    return true;
}

static int node_restore(void *arg, const char *name, const char *instance)
{
    fixture_t *f = arg;
    assert_true(f->nrestored < 4);
    snprintf(f->restored[f->nrestored][0], 64, "%s", name);
    snprintf(f->restored[f->nrestored][1], 64, "%s", instance);
    f->nrestored++;
    return 0;
}

/* A coordinator's node state, empty, saving below f->files.dir. */
static void node_init(fixture_t *f)
{
    unit_node_init(&f->d, "coordinator", f->files.dir, 8);
    memset(f->instance, 0, sizeof(f->instance));
    f->nrestored = 0;
}

/* Its journal opened: the return code (the journal in *j, or NULL). */
static int open_journal(fixture_t *f, pd_journal_t **j)
{
    const pd_journal_role_t role = {.file = PD_COORDINATOR_JOURNAL,
                                    .legacy = PD_COORDINATOR_LEGACY,
                                    .coordinator = true,
                                    .node_at = node_at,
                                    .node_restore = node_restore,
                                    .arg = f};
    f->err[0] = '\0';
    *j = NULL;
    return pd_journal_open_as(j, &f->d.n, &role, f->instance, sizeof(f->instance), &f->l, f->err,
                              sizeof(f->err));
}

static int setup(void **state)
{
    return unit_dir_setup(state, sizeof(fixture_t), "profd-state", PD_COORDINATOR_JOURNAL);
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

/* The coordinator that wrote its journal: two actors on two nodes, window
 * 1 over steps 100-101 (pending) and window 2 over 200-200 (done: not
 * kept). Open, the journal is left to f->j's caller (NULL: closed). */
static pd_journal_t *save_state_open(fixture_t *f)
{
    pd_journal_t *j;
    node_init(f);
    snprintf(f->instance, sizeof(f->instance), INSTANCE);
    assert_int_equal(open_journal(f, &j), 0);
    assert_false(f->l.found);
    add_rank(f, 0, "node1");
    add_rank(f, 1, "node2");
    assert_int_equal(add_window(f, 100, 101), 1);
    assert_int_equal(add_window(f, 200, 200), 2);
    pd_windows_get(&f->d.ws, 2)->state = PP_WS_DONE;
    pd_journal_dirty(j);
    return j;
}

static void save_state(fixture_t *f)
{
    pd_journal_fini(save_state_open(f));
    unit_node_fini(&f->d);
    assert_int_equal(access(f->files.path, R_OK), 0);
}

/* A restarted coordinator reads the journal: its return code (the journal
 * closed again at once on success). */
static int load(fixture_t *f)
{
    pd_journal_t *j;
    node_init(f);
    int rv = open_journal(f, &j);
    if (rv == 0) {
        pd_journal_fini(j);
    } else {
        assert_null(j);
    }
    return rv;
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
    /* names read back are the registry's copies */
    assert_ptr_equal(w->members[0].node, pd_registry_name(&f->d.reg, "node1"));
    assert_ptr_equal(w->members[0].host, w->members[1].host);
    assert_ptr_equal(w->members[0].role, w->members[1].role);
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
    assert_false(f->l.found);
    assert_string_equal(f->instance, ""); /* left to the daemon to draw */
    assert_int_equal(f->d.ws.count, 0);
    unit_node_fini(&f->d);
}

static void mkdirs(const char *path)
{
    char p[512];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(p, 0700);
        *s = '/';
    }
    mkdir(p, 0700);
}

/* Member 1 of window 1 (rank 1 on node2, its id there 7) reported a
 * capture of two files: rank1/trace.json (1000 bytes, still arriving),
 * rank1/meta.json (10 bytes, arrived). Member 0's client id. */
static int64_t add_files(fixture_t *f)
{
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    pd_member_t *m = &w->members[1];
    int64_t client0 = w->members[0].client;
    assert_true(client0 > 0);
    m->node_client = 7; /* the id node2 gave it */
    m->state = PP_MS_REPORTED;
    m->caps = calloc(1, sizeof(*m->caps));
    assert_non_null(m->caps);
    pp_record_init(&pp_desc_capture, m->caps);
    m->caps[0].role = strdup("actor");
    m->caps[0].status = PP_CAP_COMPLETE;
    m->caps[0].dir = strdup("rank1");
    m->ncaps = 1;
    pd_windows_touch(&f->d.ws, w, m);
    pd_incoming_t *in = pd_windows_add_incoming(w, "rank1/trace.json");
    assert_non_null(in);
    in->member = 1;
    in->size = 1000;
    snprintf(in->checksum, sizeof(in->checksum), "xxh64:0123456789abcdef");
    in = pd_windows_add_incoming(w, "rank1/meta.json");
    assert_non_null(in);
    in->member = 1;
    in->file = 1;
    in->size = 10;
    in->done = true;
    return client0;
}

/* add_files' window as read back: member 1 unbound, its files (none of
 * the first there yet). */
static void files_read_back(fixture_t *f, int64_t client0, int64_t have)
{
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    assert_non_null(w);
    assert_int_equal(w->members[0].client, client0); /* a local rank: its id kept */
    assert_int_equal(w->members[1].client, 0);       /* bound again by its node */
    assert_int_equal(w->members[1].node_client, 7);
    assert_int_equal(w->members[1].state, PP_MS_REPORTED);
    assert_int_equal(w->members[1].ncaps, 1);
    assert_int_equal(w->nincoming, 2);
    assert_string_equal(w->incoming[0].path, "rank1/trace.json");
    assert_int_equal(w->incoming[0].member, 1);
    assert_int_equal(w->incoming[0].cap, 0);
    assert_int_equal(w->incoming[0].file, 0);
    assert_int_equal(w->incoming[0].size, 1000);
    assert_string_equal(w->incoming[0].checksum, "xxh64:0123456789abcdef");
    assert_false(w->incoming[0].done);
    assert_int_equal(w->incoming[0].have, have); /* resumes from its .part */
    assert_string_equal(w->incoming[1].path, "rank1/meta.json");
    assert_int_equal(w->incoming[1].file, 1);
    assert_true(w->incoming[1].done);
    assert_int_equal(w->incoming[1].have, 10);
    assert_int_equal(w->pending, 1); /* one file still to arrive */
    size_t idx = 9;
    assert_ptr_equal(pd_windows_incoming(w, "rank1/meta.json", &idx), &w->incoming[1]);
    assert_int_equal(idx, 1);
}

/* What only a coordinator keeps: the nodes it knew (node1 came back as a
 * new instance, node2 went for good, node3 joined), the files still
 * arriving (one half there as its .part, one done), and members of remote
 * ranks, which come back unbound (client 0) until their node registers
 * its roster again. */
static void test_state_nodes_and_files(void **state)
{
    fixture_t *f = *state;
    pd_journal_t *j = save_state_open(f);
    pd_journal_node(j, "node1", "aaaa", false);
    pd_journal_node(j, "node2", "bbbb", false);
    pd_journal_node(j, "node2", "bbbb", true);
    pd_journal_node(j, "node3", "cccc", false);
    pd_journal_node(j, "node1", "aaa2", false);
    int64_t client0 = add_files(f);
    pd_journal_dirty(j);
    pd_journal_fini(j);
    unit_node_fini(&f->d);
    /* 300 of the first file's bytes arrived */
    char part[512];
    snprintf(part, sizeof(part), "%s/run/w1-steps100-101/rank1", f->files.dir);
    mkdirs(part);
    snprintf(part, sizeof(part), "%s/run/w1-steps100-101/rank1/trace.json.part", f->files.dir);
    FILE *fp = fopen(part, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 300; i++) {
        fputc('x', fp);
    }
    fclose(fp);

    assert_int_equal(load(f), 0);
    assert_string_equal(f->err, "");
    assert_int_equal(f->l.nodes, 2);
    assert_int_equal(f->nrestored, 2);
    assert_string_equal(f->restored[0][0], "node1");
    assert_string_equal(f->restored[0][1], "aaa2");
    assert_string_equal(f->restored[1][0], "node3");
    assert_string_equal(f->restored[1][1], "cccc");
    files_read_back(f, client0, 300);
    unit_node_fini(&f->d);
    unlink(part);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Stop j, let its last jobs run on `loop`, close both and the node. */
static void journal_close(fixture_t *f, pd_journal_t *j, pd_loop_t *loop)
{
    pd_journal_stop(j);
    assert_int_equal(uv_run(&loop->uv, UV_RUN_DEFAULT), 0);
    pd_journal_fini(j);
    assert_int_equal(uv_loop_close(&loop->uv), 0);
    free(loop);
    unit_node_fini(&f->d);
}

/* A journal grown past 1 MiB (and 4 times its last snapshot) is replaced
 * by a snapshot of the state, written on the thread pool; a coordinator's
 * holds its node list and its files arriving, and no finished window. */
static void test_state_snapshot(void **state)
{
    fixture_t *f = *state;
    pd_journal_stats_t st;
    pd_loop_t *loop = calloc(1, sizeof(*loop));
    assert_non_null(loop);
    assert_int_equal(uv_loop_init(&loop->uv), 0);
    pd_journal_t *j = save_state_open(f);
    f->d.n.loop = loop;
    /* the coordinator's node list (node_at) */
    snprintf(f->restored[0][0], 64, "node1");
    snprintf(f->restored[0][1], 64, "aaaa");
    snprintf(f->restored[1][0], 64, "node3");
    snprintf(f->restored[1][1], 64, "cccc");
    f->nrestored = 2;
    int64_t client0 = add_files(f);
    pd_journal_start(j);
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    int rounds = 0;
    do { /* member 0 changes again and again */
        w->members[0].pid = 100 + rounds % 2;
        pd_member_mark(w, &w->members[0]);
        pd_journal_dirty(j);
        pd_journal_sync(j);
        pd_journal_stats(j, &st);
    } while (st.bytes <= (1 << 20) && ++rounds < 100000);   /* the snapshot begins at 1 MiB */
    assert_int_equal(uv_run(&loop->uv, UV_RUN_DEFAULT), 0); /* the snapshot's write */
    pd_journal_stats(j, &st);
    assert_int_equal(st.snapshots, 1);
    assert_true(st.snapshot_bytes > 0 && st.snapshot_bytes < 8192);
    assert_true(file_size(f->files.path) < 65536);
    journal_close(f, j, loop);

    assert_int_equal(load(f), 0);
    assert_string_equal(f->err, "");
    assert_int_equal(f->l.nodes, 2); /* written by the snapshot alone */
    assert_string_equal(f->restored[0][0], "node1");
    assert_string_equal(f->restored[1][0], "node3");
    assert_int_equal(f->d.ws.count, 1); /* the finished window is not in it */
    files_read_back(f, client0, 0);
    unit_node_fini(&f->d);
}

/* A snapshot is written as it is encoded, a piece at a time: a window of
 * 6,000 members (over 1 MB of snapshot) is encoded into a buffer of at
 * most 512 KiB (pieces of 256 KiB, the last record past one), and reads
 * back whole. Before, its whole text was built first (17 MB at 16,384
 * ranks with their files arriving: the top of the coordinator's peak). */
static void test_state_snapshot_streamed(void **state)
{
    fixture_t *f = *state;
    pd_journal_stats_t st;
    pd_journal_t *j;
    pd_loop_t *loop = calloc(1, sizeof(*loop));
    assert_non_null(loop);
    assert_int_equal(uv_loop_init(&loop->uv), 0);
    node_init(f);
    pd_registry_fini(&f->d.reg);
    pd_registry_init(&f->d.reg, 8192);
    snprintf(f->instance, sizeof(f->instance), INSTANCE);
    assert_int_equal(open_journal(f, &j), 0);
    f->d.n.loop = loop;
    for (int64_t r = 0; r < 6000; r++) {
        add_rank(f, r, r % 2 ? "node2" : "node1");
    }
    assert_int_equal(add_window(f, 100, 101), 1);
    pd_journal_start(j);
    pd_journal_dirty(j);
    pd_journal_sync(j);
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    int rounds = 0;
    do { /* member 7 changes until the file is 4 times the first snapshot and 1 MiB */
        w->members[7].pid = 100 + rounds % 2;
        pd_member_mark(w, &w->members[7]);
        pd_journal_dirty(j);
        pd_journal_sync(j);
        pd_journal_stats(j, &st);
    } while (st.snapshots == 0 && !uv_loop_alive(&loop->uv) && ++rounds < 100000);
    assert_int_equal(uv_run(&loop->uv, UV_RUN_DEFAULT), 0); /* its fdatasync */
    pd_journal_stats(j, &st);
    assert_int_equal(st.snapshots, 1);
    assert_true(st.snapshot_bytes > 1000000);
    assert_true(st.snapshot_buffer > 0 && st.snapshot_buffer <= 512 * 1024);
    w->members[9].state = PP_MS_LOST; /* after the snapshot: appended to it */
    pd_member_mark(w, &w->members[9]);
    pd_journal_dirty(j);
    journal_close(f, j, loop);
    assert_int_equal(load(f), 0);
    assert_string_equal(f->err, "");
    w = pd_windows_get(&f->d.ws, 1);
    assert_int_equal(w->nmembers, 6000);
    assert_int_equal(w->members[9].state, PP_MS_LOST);
    assert_int_equal(w->members[5999].state, PP_MS_EXPECTED);
    unit_node_fini(&f->d);
}

/* A write costs what changed: once the journal holds the state, one member
 * marked is one record, of that member; a member changed without a mark
 * is not written again. */
static void test_state_writes_what_changed(void **state)
{
    fixture_t *f = *state;
    pd_journal_stats_t a, b;
    pd_journal_t *j = save_state_open(f);
    pd_journal_sync(j);
    pd_journal_stats(j, &a);
    assert_int_equal(a.members, 4); /* two windows of two members */
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    w->members[0].pid = 4242; /* not marked */
    w->members[1].state = PP_MS_LOST;
    pd_member_mark(w, &w->members[1]);
    pd_member_mark(w, &w->members[1]); /* listed once */
    pd_journal_dirty(j);
    pd_journal_sync(j);
    pd_journal_stats(j, &b);
    assert_int_equal(b.records - a.records, 1);
    assert_int_equal(b.members - a.members, 1);
    pd_journal_fini(j);
    unit_node_fini(&f->d);
    assert_int_equal(load(f), 0);
    w = pd_windows_get(&f->d.ws, 1);
    assert_int_equal(w->members[1].state, PP_MS_LOST);
    assert_int_equal(w->members[0].pid, 100); /* as the journal holds it */
    unit_node_fini(&f->d);
}

/* A large batch of records (a window of 2,000 members: ~400 KB encoded)
 * does not keep its encode buffer once written; a small one keeps it for
 * the next records. Before, the buffer stayed at its largest for good: 4
 * MiB of a coordinator's peak after a window of 16,384 ranks. */
static void test_state_buffer_given_back(void **state)
{
    fixture_t *f = *state;
    pd_journal_stats_t st;
    pd_journal_t *j;
    node_init(f);
    pd_registry_fini(&f->d.reg);
    pd_registry_init(&f->d.reg, 4096);
    snprintf(f->instance, sizeof(f->instance), INSTANCE);
    assert_int_equal(open_journal(f, &j), 0);
    for (int64_t r = 0; r < 2000; r++) {
        add_rank(f, r, r % 2 ? "node2" : "node1");
    }
    assert_int_equal(add_window(f, 100, 101), 1);
    pd_journal_dirty(j);
    pd_journal_sync(j);
    pd_journal_stats(j, &st);
    assert_int_equal(st.members, 2000);
    assert_true(st.bytes > 256 * 1024);
    assert_int_equal(st.buffered, 0);
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    w->members[7].state = PP_MS_LOST;
    pd_member_mark(w, &w->members[7]);
    pd_journal_dirty(j);
    pd_journal_sync(j);
    pd_journal_stats(j, &st);
    assert_int_equal(st.members, 2001);
    assert_true(st.buffered > 0 && st.buffered <= 256 * 1024); /* kept: small */
    pd_journal_fini(j);
    unit_node_fini(&f->d);
    assert_int_equal(load(f), 0);
    assert_int_equal(pd_windows_get(&f->d.ws, 1)->nmembers, 2000);
    assert_int_equal(pd_windows_get(&f->d.ws, 1)->members[7].state, PP_MS_LOST);
    unit_node_fini(&f->d);
}

/* A write that fails (here a file-size limit, as a full disk) loses
 * nothing: the file is as it was, the records wait in memory, and the next
 * write that can puts them there. */
static void test_state_write_fails(void **state)
{
    fixture_t *f = *state;
    pd_journal_stats_t a, b;
    struct rlimit was, lim;
    pd_journal_t *j = save_state_open(f);
    pd_journal_sync(j);
    off_t size = file_size(f->files.path);
    pd_journal_stats(j, &a);
    assert_int_equal(a.write_errors, 0);
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN); /* as profd: EFBIG, not a kill */
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    lim = was;
    lim.rlim_cur = (rlim_t)size;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    pd_window_t *w = pd_windows_get(&f->d.ws, 1);
    w->members[1].state = PP_MS_LOST;
    pd_member_mark(w, &w->members[1]);
    pd_journal_dirty(j);
    pd_journal_sync(j);
    pd_journal_stats(j, &b);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    signal(SIGXFSZ, old);
    assert_int_equal(b.write_errors, 1);
    assert_int_equal(b.bytes, a.bytes);
    assert_int_equal(file_size(f->files.path), size); /* no torn line left */
    pd_journal_sync(j);                               /* the limit gone: written now */
    pd_journal_stats(j, &b);
    assert_int_equal(b.write_errors, 1);
    assert_true(b.bytes > a.bytes);
    assert_int_equal(file_size(f->files.path), size + (b.bytes - a.bytes));
    pd_journal_fini(j);
    unit_node_fini(&f->d);
    assert_int_equal(load(f), 0);
    assert_int_equal(pd_windows_get(&f->d.ws, 1)->members[1].state, PP_MS_LOST);
    unit_node_fini(&f->d);
}

/* What cannot be read back stops the start with the file, the line and
 * the reason, and leaves the file as it was. */
static void test_state_corrupt_refused(void **state)
{
    fixture_t *f = *state;
    static const struct {
        const char *text, *why; /* why NULL: the codec's reason */
        int line;
        size_t windows; /* restored before the line refused (the start stops anyway) */
    } cases[] = {
        {"garbage\n" HEAD, NULL, 1, 0},
        {HEAD "{\"kind\":\"window\",\"window\":{\"id\":1}}\n", NULL, 2, 0},
        {"{\"kind\":\"head\",\"head\":{\"version\":2,\"instance\":\"" INSTANCE "\"}}\n",
         "unknown version or instance", 1, 0},
        {"{\"kind\":\"head\",\"head\":{\"version\":1,\"instance\":\"\"}}\n",
         "unknown version or instance", 1, 0},
        {"{\"kind\":\"head\",\"head\":{\"version\":1,\"instance\":\"0123456789012345678901234\"}}"
         "\n",
         "unknown version or instance", 1, 0},
        {HEAD "{\"kind\":\"node\",\"node\":{\"name\":\"no de\",\"instance\":\"x\"}}\n",
         "a node is not valid", 2, 0},
        {HEAD "{\"kind\":\"window\",\"window\":{\"id\":1,\"name\":\"w1\",\"job\":\"run\","
              "\"dir\":\"/tmp/run/w1\",\"root_len\":4}}\n",
         "a window is not valid", 2, 0}, /* no state */
        {HEAD "{\"kind\":\"window\",\"window\":{\"id\":1,\"name\":\"w1\",\"job\":\"run\","
              "\"state\":\"pending\",\"dir\":\"/etc/passwd/x\",\"root_len\":4}}\n",
         "window 1: its folder is not <save_path>/<job>/<window>", 2, 0},
        {HEAD "{\"kind\":\"window\",\"window\":{\"id\":1,\"name\":\"w1\",\"job\":\"run\","
              "\"state\":\"gathering\",\"dir\":\"/tmp/run/w1\",\"root_len\":4}}\n"
              "{\"kind\":\"incoming\",\"id\":1,\"index\":0,\"incoming\":{\"path\":\"x/trace.json\","
              "\"member\":3}}\n",
         "an incoming file is not valid", 3, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[256], want[700];
        if (cases[i].why == NULL) {
            const char *bad = cases[i].text;
            for (int l = 1; l < cases[i].line; l++) {
                bad = strchr(bad, '\n') + 1;
            }
            pp_jrec_t r;
            assert_int_not_equal(pp_record_decode(&pp_desc_jrec, bad,
                                                  (size_t)(strchr(bad, '\n') - bad + 1), &r, why,
                                                  sizeof(why)),
                                 0);
        } else {
            snprintf(why, sizeof(why), "%s", cases[i].why);
        }
        snprintf(want, sizeof(want), "journal %s:%d: %s" AGAIN, f->files.path, cases[i].line, why);
        spit(f->files.path, cases[i].text);
        int rv = load(f);
        if (rv != PROFD_ECONFIG || strcmp(f->err, want) != 0) {
            fail_msg("case %zu: %d '%s', want %d '%s'", i, rv, f->err, PROFD_ECONFIG, want);
        }
        assert_int_equal(f->d.ws.count, cases[i].windows);
        unit_node_fini(&f->d);
        /* the file as it was */
        FILE *fp = fopen(f->files.path, "rb");
        char back[1024] = "";
        assert_non_null(fp);
        size_t n = fread(back, 1, sizeof(back) - 1, fp);
        fclose(fp);
        back[n] = '\0';
        assert_string_equal(back, cases[i].text);
    }
}

/* ---- an older coordinator's whole-state file, imported ---- */

static void legacy_path(const fixture_t *f, char *out, size_t len, const char *suffix)
{
    snprintf(out, len, "%s/" PD_COORDINATOR_LEGACY "%s", f->files.dir, suffix);
}

/* A coordinator from before the journal restarts on its state file: what
 * the file held is there (instance, node, window, its member unbound, its
 * file arriving), the journal is written from it and the file renamed
 * .imported; the next start reads the journal. */
static void test_state_import(void **state)
{
    fixture_t *f = *state;
    char old[256], done[256], text[2048];
    legacy_path(f, old, sizeof(old), "");
    legacy_path(f, done, sizeof(done), ".imported");
    snprintf(text, sizeof(text),
             "{\"version\":1,\"instance\":\"" INSTANCE "\",\"next_id\":3,"
             "\"nodes\":[{\"name\":\"node1\",\"instance\":\"aaaa\"}],"
             "\"windows\":[{\"id\":1,\"name\":\"w1-steps100-101\",\"job\":\"run\","
             "\"spec\":{\"tool\":\"sim\",\"selectors\":[{\"role\":\"actor\",\"all_ranks\":true}]},"
             "\"first\":100,\"last\":101,\"state\":\"gathering\","
             "\"dir\":\"%s/run/w1-steps100-101\",\"root_len\":%zu,"
             "\"members\":[{\"node\":\"node1\",\"node_client\":5,\"client\":9,\"role\":\"actor\","
             "\"host\":\"h1\",\"rank\":0,\"pid\":100,\"selector\":0,\"state\":\"reported\","
             "\"captures\":[{\"role\":\"actor\",\"status\":\"complete\",\"dir\":\"rank0\","
             "\"files\":[{\"path\":\"trace.json\",\"bytes\":1000}]}]}],"
             "\"incoming\":[{\"path\":\"rank0/trace.json\",\"member\":0,\"cap\":0,"
             "\"file\":0,\"size\":1000,\"done\":false}]}]}",
             f->files.dir, strlen(f->files.dir));
    spit(old, text);
    for (int round = 0; round < 2; round++) { /* imported, then from the journal */
        assert_int_equal(load(f), 0);
        assert_string_equal(f->err, "");
        assert_true(f->l.found);
        assert_int_equal(f->l.imported, round == 0);
        assert_int_equal(access(old, F_OK), -1);
        assert_int_equal(access(done, R_OK), 0);
        assert_int_equal(access(f->files.path, R_OK), 0);
        assert_string_equal(f->instance, INSTANCE);
        assert_int_equal(f->nrestored, 1);
        assert_string_equal(f->restored[0][0], "node1");
        assert_string_equal(f->restored[0][1], "aaaa");
        assert_int_equal(f->d.ws.count, 1);
        assert_true(f->d.ws.next_id >= 3);
        pd_window_t *w = pd_windows_get(&f->d.ws, 1);
        assert_non_null(w);
        assert_int_equal(w->state, PP_WS_GATHERING);
        assert_int_equal(w->nmembers, 1);
        assert_int_equal(w->members[0].client, 0);
        assert_int_equal(w->members[0].node_client, 5);
        assert_int_equal(w->members[0].state, PP_MS_REPORTED);
        assert_int_equal(w->members[0].ncaps, 1);
        assert_int_equal(w->nincoming, 1);
        assert_string_equal(w->incoming[0].path, "rank0/trace.json");
        assert_int_equal(w->incoming[0].size, 1000);
        assert_int_equal(w->incoming[0].have, 0);
        assert_int_equal(w->pending, 1);
        unit_node_fini(&f->d);
    }
    unlink(done);
}

/* A state file that cannot be read back stops the start with the file and
 * the reason (as before the journal), and stays as it was. */
static void test_state_import_refused(void **state)
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
    char old[256];
    legacy_path(f, old, sizeof(old), "");
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
        snprintf(want, sizeof(want), "coordinator state %s: %s" AGAIN, old, why);
        spit(old, cases[i].text);
        int rv = load(f);
        if (rv != PROFD_ECONFIG || strcmp(f->err, want) != 0) {
            fail_msg("case %zu: %d '%s', want %d '%s'", i, rv, f->err, PROFD_ECONFIG, want);
        }
        assert_int_equal(f->d.ws.count, 0);
        unit_node_fini(&f->d);
        assert_int_equal(access(f->files.path, F_OK), -1); /* no journal written */
        FILE *fp = fopen(old, "rb");
        char back[1024] = "";
        assert_non_null(fp);
        size_t n = fread(back, 1, sizeof(back) - 1, fp);
        fclose(fp);
        back[n] = '\0';
        assert_string_equal(back, cases[i].text);
    }
    unlink(old);
}

int main(void)
{
    return PD_RUN_EACH(setup, unit_dir_teardown, test_state_read_back, test_state_none,
                       test_state_nodes_and_files, test_state_writes_what_changed,
                       test_state_buffer_given_back, test_state_write_fails, test_state_snapshot,
                       test_state_snapshot_streamed, test_state_corrupt_refused, test_state_import,
                       test_state_import_refused);
}
