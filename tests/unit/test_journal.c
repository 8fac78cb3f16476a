// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * node/journal.c read back, against what journal.h promises: the records in
 * order, the later of a rank replacing the earlier and a rank gone for good
 * not restored; the instance kept; a torn last line (a kill in the middle
 * of a write) ignored and cut off; any other line that does not decode
 * refused with one line naming the file and the line; a journal with
 * records but no head refused. The journal is written by the module itself
 * (ranks registered, then pd_journal_fini) and then changed by hand. No
 * loop runs: nothing here waits for a timer.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "unit_fixture.h"

#include "journal.h"
#include "node_fixture.h"
#include "profd/errors.h"

#define INSTANCE "0123456789abcdef"
#define AGAIN    " (move the file away to start afresh)"

typedef struct fixture {
    unit_dir_t files; /* first: unit_dir_setup */
    unit_node_t d;
    char instance[24];
    int64_t ids[3];        /* write_journal's ranks */
    pd_journal_loaded_t l; /* what reopen read */
    char err[512];         /* and its error */
} fixture_t;

/* A daemon's node state, empty, saving below f->files.dir. */
static void node_init(fixture_t *f)
{
    unit_node_init(&f->d, "node1", f->files.dir, 8);
    memset(f->instance, 0, sizeof(f->instance));
}

static int setup(void **state)
{
    return unit_dir_setup(state, sizeof(fixture_t), "profd-journal", ".profd-node1.journal");
}

static pd_rank_t *add_rank(fixture_t *f, const char *role, int64_t rank, const char *host)
{
    pd_rank_t *k;
    assert_int_equal(unit_node_add(&f->d, role, rank, host, "node1", &k), 0);
    return k;
}

/* A journal opened where there was none, the daemon's instance INSTANCE:
 * nothing found, nothing restored. */
static pd_journal_t *open_new(fixture_t *f)
{
    pd_journal_t *j;
    node_init(f);
    snprintf(f->instance, sizeof(f->instance), INSTANCE);
    assert_int_equal(pd_journal_open(&j, &f->d.n, f->instance, sizeof(f->instance), &f->l, f->err,
                                     sizeof(f->err)),
                     0);
    assert_false(f->l.found);
    assert_int_equal(f->l.lines + f->l.torn + f->l.ranks + f->l.windows, 0);
    return j;
}

/* A journal written by the module: the head (instance INSTANCE), actor 0
 * on h0, actor 1 on h1, then actor 1 again on h9 (its later record), and
 * rollout 2 on h2 gone for good. Its three ids in f->ids. */
static void write_journal(fixture_t *f)
{
    pd_journal_t *j = open_new(f);
    pd_rank_t *a = add_rank(f, "actor", 0, "h0");
    pd_rank_t *b = add_rank(f, "actor", 1, "h1");
    pd_rank_t *c = add_rank(f, "rollout", 2, "h2");
    f->ids[0] = a->id;
    f->ids[1] = b->id;
    f->ids[2] = c->id;
    pd_journal_rank(j, a);
    pd_journal_rank(j, b);
    pd_journal_rank(j, c);
    b->host = pd_registry_name(&f->d.reg, "h9");
    pd_journal_rank(j, b);
    pd_journal_rank_gone(j, c->id);
    pd_journal_fini(j);
    unit_node_fini(&f->d);
}

/* Open the journal on a fresh node: its return code; what it read in
 * f->l, its error in f->err. The node stays for the caller to look at and
 * free. */
static int reopen(fixture_t *f)
{
    pd_journal_t *j = NULL;
    node_init(f);
    f->err[0] = '\0';
    int rv = pd_journal_open(&j, &f->d.n, f->instance, sizeof(f->instance), &f->l, f->err,
                             sizeof(f->err));
    if (rv == 0) {
        pd_journal_fini(j);
    } else {
        assert_null(j);
    }
    return rv;
}

/* reopen() succeeds, having read `lines` lines, `torn` of them cut short,
 * and restored `ranks` ranks. */
static void reopen_read(fixture_t *f, size_t lines, size_t torn, size_t ranks)
{
    assert_int_equal(reopen(f), 0);
    assert_int_equal(f->l.lines, lines);
    assert_int_equal(f->l.torn, torn);
    assert_int_equal(f->l.ranks, ranks);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *buf = calloc(1, 1 << 16);
    *len = fread(buf, 1, (1 << 16) - 1, fp);
    fclose(fp);
    return buf;
}

static void spit(const char *path, const char *text, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, len, fp), len);
    fclose(fp);
}

static int nlines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++) {
        n += *p == '\n';
    }
    return n;
}

/* The journal's lines, with `line` put before line `at` (1-based; past
 * the end: appended). */
static void insert_line(fixture_t *f, int at, const char *line)
{
    size_t len;
    char *text = slurp(f->files.path, &len);
    char *out = calloc(1, len + strlen(line) + 1);
    const char *p = text;
    for (int no = 1; no < at && *p; no++) {
        p = strchr(p, '\n') + 1;
    }
    size_t head = (size_t)(p - text);
    memcpy(out, text, head);
    memcpy(out + head, line, strlen(line));
    memcpy(out + head + strlen(line), p, len - head);
    spit(f->files.path, out, len + strlen(line));
    free(out);
    free(text);
}

/* `line` put before line `at` (insert_line), the journal reopened: read
 * as 6 lines, `torn` of them cut short, and its 2 ranks restored. */
static void reopen_with(fixture_t *f, int at, const char *line, size_t torn)
{
    insert_line(f, at, line);
    reopen_read(f, 6, torn, 2);
    unit_node_fini(&f->d);
}

/* What the codec says of `line`: the reason the journal must name. */
static void decode_error(const char *line, char *why, size_t len)
{
    pp_jrec_t r;
    assert_int_not_equal(pp_record_decode(&pp_desc_jrec, line, strlen(line), &r, why, len), 0);
}

/* ---- tests ---- */

static void test_journal_read_back(void **state)
{
    fixture_t *f = *state;
    write_journal(f);
    size_t len;
    char *text = slurp(f->files.path, &len);
    assert_int_equal(nlines(text), 6); /* head, 4 ranks, a rank gone */
    free(text);

    memset(f->instance, 0, sizeof(f->instance));
    reopen_read(f, 6, 0, 2);
    assert_true(f->l.found);
    assert_int_equal(f->l.windows, 0);
    assert_string_equal(f->l.coordinator, "");
    assert_string_equal(f->instance, INSTANCE); /* the same daemon */
    pd_rank_t *a = pd_registry_get(&f->d.reg, f->ids[0]);
    pd_rank_t *b = pd_registry_get(&f->d.reg, f->ids[1]);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(pd_registry_get(&f->d.reg, f->ids[2])); /* gone for good */
    assert_string_equal(a->host, "h0");
    assert_string_equal(b->host, "h9"); /* the later record */
    assert_string_equal(b->job, "run");
    assert_int_equal(b->rank, 1);
    assert_int_equal(b->pid, 101);
    assert_true(b->restored);
    unit_node_fini(&f->d);
}

/* A kill in the middle of a write: the last line is cut short. It is
 * ignored, cut off the file, and the next record starts a line of its own. */
static void test_journal_torn_last_line(void **state)
{
    fixture_t *f = *state;
    size_t len, len2;
    write_journal(f);
    char *before = slurp(f->files.path, &len);
    reopen_with(f, 99, "{\"kind\":\"rank\",\"rank\":{\"id\":", 1);
    char *after = slurp(f->files.path, &len2);
    assert_int_equal(len2, len); /* nothing more was written: the torn part is gone */
    assert_memory_equal(after, before, len);
    free(after);
    free(before);

    /* one byte of a record cut short is torn as well */
    reopen_with(f, 99, "{", 1);
}

/* A whole line that does not decode, anywhere, stops the daemon with the
 * file and the line; so does a line that decodes to a record not valid
 * (with a done window's counts that are not five counts, none negative:
 * the same line with [0,1,0,0,0] on a done window loads; or what it keeps
 * of its members not valid: {"ranks":2} with those counts loads). */
/* A window record of window 9 in `state` with its counts `captured`. */
#define WINDOW9(state, captured)                                                                   \
    "{\"kind\":\"window\",\"window\":{\"id\":9,\"name\":\"w9-step5\",\"job\":\"j\","               \
    "\"state\":\"" state "\",\"dir\":\"/save/j/w9-step5\",\"root_len\":5,\"captured\":" captured   \
    "}}\n"

/* The same with what it keeps of its members, `kept`. */
#define WINDOW9K(state, captured, kept)                                                            \
    "{\"kind\":\"window\",\"window\":{\"id\":9,\"name\":\"w9-step5\",\"job\":\"j\","               \
    "\"state\":\"" state "\",\"dir\":\"/save/j/w9-step5\",\"root_len\":5" captured                 \
    ",\"kept\":" kept "}}\n"

static void test_journal_corrupt_line_refused(void **state)
{
    fixture_t *f = *state;
    char want[700], why[256];
    static const struct {
        int at;
        const char *line;
        const char *why; /* NULL: the codec's reason */
    } cases[] = {
        {2, "garbage\n", NULL},
        {4, "{\"kind\":\"rank\",\"rank\":{\"id\":7}}\n", NULL},
        {3, "{\"kind\":\"nonsense\"}\n", NULL},
        {99, "{\"kind\":\"rank\",\"rank\":{\"id\":\n", NULL}, /* last, but whole: not torn */
        {2,
         "{\"kind\":\"rank\",\"rank\":{\"id\":0,\"job\":\"j\",\"role\":\"r\",\"rank\":0,"
         "\"host\":\"h\",\"pid\":1}}\n",
         "a rank is not valid"},
        {1, "{\"kind\":\"head\",\"head\":{\"version\":2,\"instance\":\"x\"}}\n",
         "unknown version or instance"},
        {2, "{\"kind\":\"member\",\"id\":42,\"index\":0,\"member\":{\"role\":\"actor\"}}\n",
         "a window member is not valid"},
        /* a compacted window's counts: five, none negative, of a done window */
        {2, WINDOW9("done", "[0,1,0,0]"), "a window is not valid"},
        {2, WINDOW9("done", "[0,1,-1,0,0]"), "a window is not valid"},
        {2, WINDOW9("active", "[0,1,0,0,0]"), "a window is not valid"},
        /* what a compacted window keeps of its members: of a compacted
         * window, a count not negative, a selector of its request, names
         * fit for roles, [host, node] pairs */
        {2, WINDOW9K("done", "", "{\"ranks\":2}"), "a window is not valid"},
        {2, WINDOW9K("done", ",\"captured\":[0,1,0,0,0]", "{\"ranks\":-1}"),
         "a window is not valid"},
        {2, WINDOW9K("done", ",\"captured\":[0,1,0,0,0]", "{\"ranks\":2,\"selector\":0}"),
         "a window is not valid"},
        {2, WINDOW9K("done", ",\"captured\":[0,1,0,0,0]", "{\"ranks\":2,\"roles\":[\"a b\"]}"),
         "a window is not valid"},
        {2, WINDOW9K("done", ",\"captured\":[0,1,0,0,0]", "{\"ranks\":2,\"nodes\":[\"h\"]}"),
         "a window is not valid"},
    };
    write_journal(f);
    size_t len;
    char *good = slurp(f->files.path, &len);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        spit(f->files.path, good, len);
        insert_line(f, cases[i].at, cases[i].line);
        int line = cases[i].at > 7 ? 7 : cases[i].at;
        if (cases[i].why == NULL) {
            decode_error(cases[i].line, why, sizeof(why));
        } else {
            snprintf(why, sizeof(why), "%s", cases[i].why);
        }
        snprintf(want, sizeof(want), "journal %s:%d: %s" AGAIN, f->files.path, line, why);
        assert_int_equal(reopen(f), PROFD_ECONFIG);
        if (strcmp(f->err, want) != 0) {
            fail_msg("case %zu: '%s', want '%s'", i, f->err, want);
        }
        assert_int_equal(f->l.ranks, 0); /* nothing restored */
        unit_node_fini(&f->d);
        size_t len2;
        char *now = slurp(f->files.path, &len2);
        assert_int_equal(len2, len + strlen(cases[i].line)); /* left as it was */
        free(now);
    }
    free(good);
}

/* Member `index` of window 9: a reported rank of host h<index>, uid U. */
#define MEMBER9(index, uid)                                                                        \
    "{\"kind\":\"member\",\"id\":9,\"index\":" index ",\"member\":{\"role\":\"actor\","            \
    "\"host\":\"h" index "\",\"rank\":" index ",\"pid\":10" index ",\"selector\":-1,"              \
    "\"state\":\"reported\",\"captures\":[],\"uid\":" uid "}}\n"

/* A done window read back is compacted with its members freed, what it
 * keeps of them kept: from a journal from before `kept` (its members'
 * records: counted, the first uid, then freed), or from its `kept` alone
 * (no member record). The list shows the same count either way. */
static void test_journal_done_window_kept(void **state)
{
    fixture_t *f = *state;
    static const char *const cases[] = {
        WINDOW9("done", "[0,2,0,0,0]") MEMBER9("0", "null") MEMBER9("1", "1234"),
        WINDOW9K("done", ",\"captured\":[0,2,0,0,0]",
                 "{\"ranks\":2,\"uid\":1234,\"tool\":\"sim\",\"roles\":[\"actor\"],"
                 "\"selector\":-1}"),
    };
    const size_t lines[] = {9, 7};
    const char *tool[] = {"torch", "sim"}; /* its request's (none: the default), or as kept */
    write_journal(f);
    size_t len;
    char *good = slurp(f->files.path, &len);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        spit(f->files.path, good, len);
        insert_line(f, 99, cases[i]);
        reopen_read(f, lines[i], 0, 2);
        assert_int_equal(f->l.windows, 1);
        pd_window_t *w = pd_windows_get(&f->d.ws, 9);
        assert_non_null(w);
        assert_true(w->compact);
        assert_true(w->slim);
        assert_null(w->members);
        assert_int_equal(w->nmembers, 0);
        assert_int_equal(pd_windows_ranks(w), 2);
        assert_int_equal(pd_windows_owner_uid(w), 1234);
        pp_window_t info;
        pd_windows_info(w, false, &info);
        assert_int_equal(info.selected, 2);
        assert_int_equal(info.reported, 2);
        assert_int_equal(info.complete, 2);
        assert_string_equal(info.tool, tool[i]);
        assert_int_equal(info.roles_n, 1);
        assert_string_equal(info.roles[0], "actor");
        pd_windows_info_free(&info);
        unit_node_fini(&f->d);
    }
    free(good);
}

/* An empty line (a write cut before its record) is passed over. */
static void test_journal_empty_line_skipped(void **state)
{
    fixture_t *f = *state;
    write_journal(f);
    reopen_with(f, 3, "\n", 0);
}

/* Records without the head that says whose they are: refused. */
static void test_journal_no_head(void **state)
{
    fixture_t *f = *state;
    char want[600];
    size_t len;
    write_journal(f);
    char *text = slurp(f->files.path, &len);
    const char *rest = strchr(text, '\n') + 1; /* line 1 is the head */
    spit(f->files.path, rest, len - (size_t)(rest - text));
    free(text);
    assert_int_equal(reopen(f), PROFD_ECONFIG);
    snprintf(want, sizeof(want), "journal %s: no head record" AGAIN, f->files.path);
    assert_string_equal(f->err, want);
    unit_node_fini(&f->d);
}

/* No journal: nothing found, and the new one starts with the head. */
static void test_journal_none(void **state)
{
    fixture_t *f = *state;
    pd_journal_fini(open_new(f));
    unit_node_fini(&f->d);
    size_t len;
    char *text = slurp(f->files.path, &len);
    assert_int_equal(nlines(text), 1);
    pp_jrec_t r;
    char why[256];
    assert_int_equal(pp_record_decode(&pp_desc_jrec, text, len, &r, why, sizeof(why)), 0);
    assert_int_equal(r.kind, PP_JR_HEAD);
    assert_string_equal(r.head.instance, INSTANCE);
    assert_int_equal(r.head.version, 1);
    pp_record_free(&pp_desc_jrec, &r);
    free(text);
    struct stat st;
    assert_int_equal(stat(f->files.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

int main(void)
{
    return PD_RUN_EACH(setup, unit_dir_teardown, test_journal_read_back,
                       test_journal_done_window_kept, test_journal_torn_last_line,
                       test_journal_corrupt_line_refused, test_journal_empty_line_skipped,
                       test_journal_no_head, test_journal_none);
}
