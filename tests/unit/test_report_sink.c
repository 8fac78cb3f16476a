// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* report.html drawn to a sink piece by piece (pd_report_html_to, and the why
 * part drawn into it, pd_report_html_part_to): the pure core, byte for byte
 * against the page built whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"
#include "htmlbuf.h"
#include "reporthtml.h"
#include "reportwhy.h"
#include "stepdoc.h"
#include "sink_got.h"

static pd_hist_id_t hist_id(const char *role, int64_t rank)
{
    pd_hist_id_t id = {"run", role, "node1", NULL, rank, PP_NONE, 100 + rank};
    return id;
}

typedef struct why_arg {
    const pp_steps_doc_t *d;
    const pp_manifest_t *m;
} why_arg_t;

static void why_draw(pu_sbuf_t *b, const void *arg)
{
    const why_arg_t *a = arg;
    pd_report_why_draw(b, a->d, a->m, NULL);
}

/* The why part drawn into the page as a part (pd_report_html_part_to) is
 * spilled at its rows' ends like the page's own tables: the bytes of the
 * page with its whole text (drawn with no sink) as `extra`, in pieces of about
 * PP_SINK_PIECE, although the fragment is over 4 of them (3,000 traces
 * listed). Before, report.c built it whole: 4 MiB at 16,384 ranks. */
static void why_in_pieces(const pp_steps_doc_t *d, const pp_manifest_t *man)
{
    enum { CAPS = 3000 };
    pp_file_t file = {.path = "rank-trace.pt.trace.json", .bytes = 4096};
    pp_capture_t *caps = calloc(CAPS, sizeof(*caps));
    assert_non_null(caps);
    for (int k = 0; k < CAPS; k++) {
        pp_record_init(&pp_desc_capture, &caps[k]);
        caps[k].role = "actor";
        caps[k].rank = k;
        caps[k].host = "node1";
        caps[k].status = PP_CAP_COMPLETE;
        caps[k].dir = "e2e/rank-node1";
        caps[k].files = &file;
        caps[k].files_n = 1;
    }
    pp_manifest_t m = *man;
    m.captures = caps;
    m.captures_n = CAPS;
    char *wtext, *whole;
    size_t wlen, len;
    pd_hout_t whole_why = {.sink = NULL}; /* no sink: the fragment whole */
    pd_report_why_draw(&whole_why.b, d, &m, NULL);
    assert_false(whole_why.b.oom);
    wtext = whole_why.b.p;
    wlen = whole_why.b.len;
    assert_true(wlen > 4 * PP_SINK_PIECE);
    assert_non_null(
        strstr(wtext, "<li>rank 2999 actor: <a href=\"e2e/rank-node1/rank-trace.pt.trace.json\">"));
    assert_int_equal(pd_report_html_with(d, &m, "1.0", wtext, &whole, &len), 0);
    why_arg_t a = {d, &m};
    pd_report_part_t part = {.draw = why_draw, .arg = &a};
    sink_got_t got = {0};
    pp_sink_t sink = {.put = sink_got_put, .arg = &got};
    assert_int_equal(pd_report_html_part_to(d, &m, "1.0", &part, &sink), 0);
    assert_int_equal(got.len, len);
    assert_memory_equal(got.text, whole, len);
    assert_true(got.largest >= PP_SINK_PIECE && got.largest < PP_SINK_PIECE + 8192);
    pp_sink_t none = {.put = sink_got_put, .arg = &got};
    pd_report_part_t empty = {.draw = NULL};
    assert_int_equal(pd_report_html_part_to(d, &m, "1.0", &empty, &none), PROFD_EINVAL);
    free(got.text);
    free(whole);
    free(wtext);
    free(caps);
}

/* report.html drawn to a sink, piece by piece, is byte for byte the page
 * built whole (with the why fragment), in pieces of about PP_SINK_PIECE
 * bytes (past it by one heatmap row or capture row at most), never the
 * whole text at once; a sink's error stops the page and is returned. */
static void test_report_html_to_a_sink(void **state)
{
    (void)state;
    enum { RANKS = 300 };
    pd_history_t h;
    pd_history_init(&h, 64, 16, RANKS);
    pd_member_t *members = calloc(RANKS, sizeof(*members));
    pp_capture_t *caps = calloc(RANKS, sizeof(*caps));
    assert_non_null(members);
    assert_non_null(caps);
    for (int k = 0; k < RANKS; k++) {
        pd_hist_id_t id = hist_id(k % 2 ? "actor" : "rollout", k);
        pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
        for (int s = 1; s <= 40; s++) {
            pd_history_put(&h, r, s, (100 + (k * 7 + s) % 50) * 1000);
            pd_history_put_phase(&h, r, s, "update_actor", 60000);
        }
        members[k].role = k % 2 ? "actor" : "rollout";
        members[k].host = "node1";
        members[k].node = "";
        members[k].rank = k;
        members[k].replica_rank = PP_NONE;
        pp_record_init(&pp_desc_capture, &caps[k]);
        caps[k].role = k % 2 ? "actor" : "rollout";
        caps[k].rank = k;
        caps[k].host = "node1";
        caps[k].first_step = 20;
        caps[k].last_step = 21;
        caps[k].status = k % 5 ? PP_CAP_COMPLETE : PP_CAP_FAILED;
        caps[k].reason = k % 5 ? NULL : "sim: <disk> full";
        caps[k].dir = k % 5 ? "e2e/rank-node1" : NULL;
        members[k].caps = &caps[k];
        members[k].ncaps = 1;
    }
    pd_window_t w;
    memset(&w, 0, sizeof(w));
    w.id = 7;
    snprintf(w.name, sizeof(w.name), "w7-steps20-21");
    snprintf(w.job, sizeof(w.job), "run");
    pp_record_init(&pp_desc_window_spec, &w.spec);
    w.spec.source = "profctl start";
    w.first = 20;
    w.last = 21;
    w.members = members;
    w.nmembers = RANKS;
    pp_steps_doc_t d;
    assert_int_equal(pd_stepdoc_build(&w, &h, "node1", &d), 0);
    assert_int_equal(d.ranks_n, RANKS);
    pp_manifest_t man;
    pp_record_init(&pp_desc_manifest, &man);
    man.version = 1;
    man.job = "run";
    man.window.id = 7;
    man.window.name = "w7-steps20-21";
    int64_t steps[2] = {20, 22};
    man.window.steps = steps;
    man.window.steps_n = 2;
    man.window.tool = "sim";
    man.window.mode = PP_MODE_E2E;
    man.window.source = "profctl start";
    man.captures = caps;
    man.captures_n = RANKS;
    const char *why = "<h2>Why</h2>\n<p>rank 2 &amp; its peer</p>\n";
    char *whole;
    size_t len;
    assert_int_equal(pd_report_html_with(&d, &man, "1.0", why, &whole, &len), 0);
    assert_true(len > 8 * PP_SINK_PIECE);
    sink_got_t got = {0};
    pp_sink_t sink = {.put = sink_got_put, .arg = &got};
    assert_int_equal(pd_report_html_to(&d, &man, "1.0", why, &sink), 0);
    assert_int_equal(got.len, len);
    assert_memory_equal(got.text, whole, len);
    /* a heatmap row: 18 cells (8 steps of context either side) */
    assert_true(got.pieces >= len / (PP_SINK_PIECE + 8192));
    assert_true(got.largest >= PP_SINK_PIECE && got.largest < PP_SINK_PIECE + 8192);
    free(got.text);
    /* the sink refuses its third piece: nothing more is drawn */
    sink_got_t bad = {.fail_at = 3};
    sink.arg = &bad;
    assert_int_equal(pd_report_html_to(&d, &man, "1.0", why, &sink), PROFD_EIO);
    assert_int_equal(bad.pieces, 3);
    assert_true(bad.len >= 2 * PP_SINK_PIECE && bad.len < len);
    assert_memory_equal(bad.text, whole, bad.len);
    free(bad.text);
    pp_sink_t none = {.put = NULL};
    assert_int_equal(pd_report_html_to(&d, &man, "1.0", why, &none), PROFD_EINVAL);
    free(whole);
    why_in_pieces(&d, &man);
    pd_stepdoc_free(&d);
    free(caps);
    free(members);
    pd_history_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_html_to_a_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
