// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Codec: round trips of every kind of field, and exact rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "profd/proto.h"
#include "sink_got.h"

static int decode(const char *json, pp_msg_t *m, char *err)
{
    return pp_msg_decode(json, strlen(json), 0, m, err, 256);
}

static void test_codec_hello_roundtrip(void **state)
{
    pp_msg_t m, back;
    char *buf;
    size_t len;
    char err[256];

    pp_msg_init(&m, PP_T_hello);
    assert_int_equal(m.u.hello.replica_rank, PP_NONE);
    m.u.hello.job = strdup("run-42");
    m.u.hello.role = strdup("rollout");
    m.u.hello.rank = 5;
    m.u.hello.replica_rank = 1;
    m.u.hello.host = strdup("node1");
    m.u.hello.pid = 4242;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_int_equal(len, strlen(buf));
    assert_non_null(strstr(buf, "\"v\":1,\"type\":\"hello\""));

    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(back.type, PP_T_hello);
    assert_string_equal(back.u.hello.job, "run-42");
    assert_string_equal(back.u.hello.role, "rollout");
    assert_int_equal(back.u.hello.rank, 5);
    assert_int_equal(back.u.hello.replica_rank, 1);
    assert_int_equal(back.u.hello.pid, 4242);
    assert_null(back.u.hello.backend);
    free(buf);
    pp_msg_free(&m);
    pp_msg_free(&back);
}

static void test_codec_nested_roundtrip(void **state)
{
    pp_msg_t m, back;
    char *buf;
    size_t len;
    char err[256];
    int64_t steps[] = {1, 2, 5};
    int64_t ranks[] = {0, 3};
    char *phases[] = {"generate"};
    pp_selector_t sel[2];

    pp_msg_init(&m, PP_T_start);
    pp_record_init(&pp_desc_selector, &sel[0]);
    pp_record_init(&pp_desc_selector, &sel[1]);
    sel[0].role = "actor";
    sel[0].ranks = ranks;
    sel[0].ranks_n = 2;
    sel[1].role = "rollout";
    sel[1].replica_ranks = ranks;
    sel[1].replica_ranks_n = 1;
    sel[1].phases = phases;
    sel[1].phases_n = 1;
    sel[1].schedule.wait = 1;
    sel[1].schedule.active = 3;
    m.u.start.steps = steps;
    m.u.start.steps_n = 3;
    m.u.start.tool = "torch";
    m.u.start.settings = "{\"contents\":[\"cpu\"],\"level\":\"level1\"}";
    m.u.start.selectors = sel;
    m.u.start.selectors_n = 2;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);

    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    pp_window_spec_t *s = &back.u.start;
    assert_int_equal(s->steps_n, 3);
    assert_int_equal(s->steps[2], 5);
    assert_int_equal(s->start, PP_NONE);
    assert_int_equal(s->end, PP_NONE);
    assert_string_equal(s->settings, "{\"contents\":[\"cpu\"],\"level\":\"level1\"}");
    assert_int_equal(s->selectors_n, 2);
    assert_string_equal(s->selectors[0].role, "actor");
    assert_int_equal(s->selectors[0].ranks_n, 2);
    assert_int_equal(s->selectors[0].ranks[1], 3);
    assert_int_equal(s->selectors[0].schedule.active, 0);
    assert_string_equal(s->selectors[1].phases[0], "generate");
    assert_int_equal(s->selectors[1].replica_ranks[0], 0);
    assert_int_equal(s->selectors[1].schedule.wait, 1);
    assert_int_equal(s->selectors[1].schedule.active, 3);
    free(buf);
    pp_msg_free(&back);
}

static void test_codec_copy_is_deep(void **state)
{
    pp_capture_t a, b;
    pp_file_t f = {.path = "trace.json", .bytes = 10, .checksum = "xxh64:00"};
    pp_record_init(&pp_desc_capture, &a);
    a.role = "actor";
    a.status = PP_CAP_COMPLETE;
    a.files = &f;
    a.files_n = 1;
    assert_int_equal(pp_record_copy(&pp_desc_capture, &b, &a), 0);
    assert_ptr_not_equal(b.files, a.files);
    assert_ptr_not_equal(b.files[0].path, f.path);
    assert_string_equal(b.files[0].path, "trace.json");
    assert_int_equal(b.files[0].bytes, 10);
    assert_int_equal(b.replica_rank, PP_NONE);
    pp_record_free(&pp_desc_capture, &b);
}

/* pp_record_equal: deep, strings by content, every kind of field. */
static void test_codec_record_equal(void **state)
{
    char *roles_a[] = {"actor", "ref"}, *roles_b[] = {"actor", "ref"};
    char *phases[] = {"fwd"};
    pp_plan_entry_t ea, eb;
    pp_plan_t a, b;
    pp_record_init(&pp_desc_plan_entry, &ea);
    ea.window = 7;
    ea.name = "w";
    ea.job = "j";
    ea.first_step = 10;
    ea.last_step = 12;
    ea.tool = "sim";
    ea.mode = PP_MODE_E2E;
    ea.settings = "{\"k\":1}";
    ea.schedule.active = 2;
    ea.roles = roles_a;
    ea.roles_n = 2;
    ea.phases = phases;
    ea.phases_n = 1;
    eb = ea;
    eb.name = strdup("w"); /* another pointer, the same text */
    eb.roles = roles_b;
    pp_record_init(&pp_desc_plan, &a);
    a.gen = 5;
    a.instance = "i";
    a.entries = &ea;
    a.entries_n = 1;
    b = a;
    b.entries = &eb;
    assert_true(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.settings = "{\"k\":2}"; /* JSON */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.settings = ea.settings;
    eb.schedule.active = 3; /* a nested record */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.schedule.active = 2;
    eb.roles_n = 1; /* an array's length */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.roles_n = 2;
    roles_b[1] = "rollout"; /* an array's element */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    roles_b[1] = "ref";
    eb.pid_dir = true; /* a boolean */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.pid_dir = false;
    eb.mode = PP_MODE_DISCRETE; /* an enumeration */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.mode = ea.mode;
    eb.last_step = PP_NONE; /* an integer, null */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    eb.last_step = 12;
    eb.tool = NULL; /* a string against none */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    assert_false(pp_record_equal(&pp_desc_plan_entry, &eb, &ea));
    eb.tool = "sim";
    b.gen = 6; /* the top level */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    b.gen = 5;
    b.entries_n = 0; /* an array of records */
    assert_false(pp_record_equal(&pp_desc_plan, &a, &b));
    b.entries_n = 1;
    assert_true(pp_record_equal(&pp_desc_plan, &a, &b));
    free(eb.name);
}

/* A version-1 manifest of window 4 over the two steps steps[0..1]. */
static void manifest4(pp_manifest_t *man, const char *job, const char *name, int64_t *steps,
                      const char *settings)
{
    pp_record_init(&pp_desc_manifest, man);
    man->version = 1;
    man->job = (char *)job;
    man->window.id = 4;
    man->window.name = (char *)name;
    man->window.steps = steps;
    man->window.steps_n = 2;
    man->window.settings = (char *)settings;
}

static void test_codec_manifest_nulls(void **state)
{
    pp_manifest_t man;
    pp_capture_t cap;
    char *buf;
    int64_t steps[] = {5, 10};
    manifest4(&man, "run-42", "w4-steps5-9", steps, "{}");
    pp_record_init(&pp_desc_capture, &cap);
    cap.role = "actor";
    cap.status = PP_CAP_COMPLETE;
    cap.first_step = 5;
    cap.last_step = 9;
    man.captures = &cap;
    man.captures_n = 1;
    assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, false, &buf, NULL), 0);
    static const char *const written[] = {
        "\"phase\":null",   "\"replica_rank\":null", "\"reason\":null",
        "\"steps\":[5,10]", "\"settings\":{}",       "\"files\":[]",
    };
    for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++) {
        assert_non_null(strstr(buf, written[i]));
    }
    assert_null(strstr(buf, "substeps"));
    free(buf);
}

/* The printer writes what cJSON prints for the same values (what profd
 * wrote before it printed records itself): cJSON's own output is a fixed
 * point of parse-and-print, so each encoding must come back unchanged,
 * compact and pretty. Integers past cJSON's 15 digits are exact text. */
static void expect_cjson_text(const char *text, bool pretty)
{
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    char *again = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(again);
    assert_string_equal(text, again);
    cJSON_free(again);
}

static void test_codec_prints_as_cjson(void **state)
{
    (void)state;
    pp_role_stats_t rs;
    pp_rank_stat_t slow[2];
    char *names[] = {"gen\"erate", "a\\b\n\t\x01\x7f", "\xc3\xa9t\xc3\xa9", ""};
    int64_t us[] = {0, -1, 2147483647, -2147483648LL, 999999999999999LL};
    char *buf;
    size_t len;

    pp_record_init(&pp_desc_role_stats, &rs);
    rs.job = "j\b\f\r";
    rs.role = "actor";
    rs.ranks = 3;
    rs.step = PP_NONE;
    rs.min_ms = 0.1;
    rs.p50_ms = 1.0 / 3.0;
    rs.max_ms = 1e300;
    for (int i = 0; i < 2; i++) {
        pp_record_init(&pp_desc_rank_stat, &slow[i]);
        slow[i].role = "actor";
        slow[i].rank = i;
        slow[i].step_ms = i ? 2147483648.0 : -2.5;
        slow[i].ratio = i ? 3.0 : -0.0;
        slow[i].in_step_ms = i ? 1e-7 : 123456.789;
        slow[i].stalled = i;
    }
    rs.slowest = slow;
    rs.slowest_n = 2;
    rs.phases = names;
    rs.phases_n = 4;
    rs.phase_us = us;
    rs.phase_us_n = 5;
    for (int pretty = 0; pretty < 2; pretty++) {
        assert_int_equal(pp_record_encode(&pp_desc_role_stats, &rs, pretty, &buf, &len), 0);
        assert_int_equal(len, strlen(buf));
        expect_cjson_text(buf, pretty);
        free(buf);
    }
    assert_int_equal(pp_record_encode(&pp_desc_role_stats, &rs, false, &buf, NULL), 0);
    assert_non_null(strstr(buf, "\"stalled\":[]"));
    assert_non_null(strstr(buf, "\"phases\":[\"gen\\\"erate\",\"a\\\\b\\n\\t\\u0001\x7f\","));
    assert_non_null(strstr(buf, "\"step\":null"));
    free(buf);

    /* nested objects and arrays of them, a settings document re-printed
     * at its depth, an empty object */
    pp_manifest_t man;
    pp_capture_t cap[2];
    int64_t steps[] = {5, 10};
    manifest4(&man, "run", "w4", steps,
              "{\"a\":[1,{\"b\":{}},[]],\"c\":{\"d\":2.5e-3,\"e\":\"x\"},\"f\":{}}");
    for (int i = 0; i < 2; i++) {
        pp_record_init(&pp_desc_capture, &cap[i]);
        cap[i].role = "rollout";
        cap[i].status = PP_CAP_COMPLETE;
        cap[i].rank = i;
    }
    man.captures = cap;
    man.captures_n = 2;
    for (int pretty = 0; pretty < 2; pretty++) {
        assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, pretty, &buf, NULL), 0);
        expect_cjson_text(buf, pretty);
        free(buf);
    }
    man.window.settings = "not json {";
    assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, false, &buf, NULL), 0);
    assert_non_null(strstr(buf, "\"settings\":\"not json {\""));
    free(buf);

    /* integers exactly, where cJSON's doubles would round them */
    int64_t big[] = {9007199254740993LL, INT64_MAX, INT64_MIN + 1, 1000000000000000LL};
    rs.phase_us = big;
    rs.phase_us_n = 4;
    rs.slowest_n = 0;
    assert_int_equal(pp_record_encode(&pp_desc_role_stats, &rs, false, &buf, NULL), 0);
    assert_non_null(strstr(buf, "\"phase_us\":[9007199254740993,9223372036854775807,"
                                "-9223372036854775807,1000000000000000]"));
    free(buf);

    /* a message: "v" and "type" first, as before */
    pp_msg_t m;
    pp_msg_init(&m, PP_T_bye);
    m.u.bye.client = 7;
    assert_int_equal(pp_msg_encode(&m, &buf, NULL), 0);
    assert_string_equal(buf, "{\"v\":1,\"type\":\"bye\",\"client\":7}");
    free(buf);
}

static void test_codec_rejects(void **state)
{
    pp_msg_t m;
    char err[256];
    char big[300];

    assert_int_equal(decode("not json", &m, err), PROFD_EPROTO);
    assert_string_equal(err, "not valid JSON");
    assert_int_equal(decode("[1,2]", &m, err), PROFD_EPROTO);
    assert_string_equal(err, "expected a JSON object");
    assert_int_equal(decode("{\"type\":\"status\"}", &m, err), PROFD_EPROTO);
    assert_int_equal(decode("{\"v\":2,\"type\":\"status\"}", &m, err), PROFD_EVERSION);
    assert_string_equal(err, "protocol version 2 not supported (this is 1)");
    assert_int_equal(decode("{\"v\":1,\"type\":\"explode\"}", &m, err), PROFD_ETYPE);
    assert_string_equal(err, "unknown message type 'explode'");
    assert_int_equal(decode("{\"v\":1}", &m, err), PROFD_EPROTO);
    assert_int_equal(decode("{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"a\","
                            "\"rank\":\"zero\",\"host\":\"h\",\"pid\":1}",
                            &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'rank': expected integer, found string");
    assert_int_equal(decode("{\"v\":1,\"type\":\"hello\",\"job\":\"j\",\"role\":\"a\","
                            "\"rank\":1.5,\"host\":\"h\",\"pid\":1}",
                            &m, err),
                     PROFD_EPROTO);
    assert_int_equal(decode("{\"v\":1,\"type\":\"hello\",\"role\":\"a\",\"rank\":1,"
                            "\"host\":\"h\",\"pid\":1}",
                            &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'job': missing");
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"start\",\"selectors\":[{\"ranks\":[0,\"x\"]}]}", &m, err),
        PROFD_EPROTO);
    assert_string_equal(err, "field 'selectors[0].ranks[1]': expected integer, found string");
    assert_int_equal(m.type, PP_T_NONE);

    memset(big, ' ', sizeof(big));
    memcpy(big, "{\"v\":1,\"type\":\"status\"}", 23);
    assert_int_equal(pp_msg_decode(big, sizeof(big), 100, &m, err, sizeof(err)), PROFD_ETOOBIG);
    assert_string_equal(err, "message of 300 bytes exceeds the limit of 100");
    /* within the limit the padding is just whitespace */
    assert_int_equal(pp_msg_decode(big, sizeof(big), 1000, &m, err, sizeof(err)), 0);
    assert_int_equal(m.type, PP_T_status);
    pp_msg_free(&m);
}

/* Every integer is bounded at the codec: within +-(2^53 - 1), the integers a
 * JSON number holds exactly; a step is in [0, 2^53). */
static void test_codec_integers_bounded(void **state)
{
    pp_msg_t m;
    char err[256];

    assert_int_equal(decode("{\"v\":1,\"type\":\"events\",\"client\":1,"
                            "\"ev\":[1,9200000000000000000,0]}",
                            &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'ev[1]': integer out of range (|n| < 2^53)");
    assert_int_equal(decode("{\"v\":1,\"type\":\"events\",\"client\":1,"
                            "\"ev\":[1,-9200000000000000000,0]}",
                            &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'ev[1]': integer out of range (|n| < 2^53)");
    /* an element far in: its index written whole, the ones before it fine */
    {
        char doc[8192];
        int n = snprintf(doc, sizeof(doc), "{\"v\":1,\"type\":\"events\",\"client\":1,\"ev\":[");
        for (int i = 0; i < 1234; i++) {
            n += snprintf(doc + n, sizeof(doc) - (size_t)n, "%d,", i);
        }
        snprintf(doc + n, sizeof(doc) - (size_t)n, "9200000000000000000,0]}");
        assert_int_equal(decode(doc, &m, err), PROFD_EPROTO);
        assert_string_equal(err, "field 'ev[1234]': integer out of range (|n| < 2^53)");
    }
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"start\",\"next\":9200000000000000000,\"roundup\":2}", &m, err),
        PROFD_EPROTO);
    assert_string_equal(err, "field 'next': integer out of range (|n| < 2^53)");
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"start\",\"next\":1,\"roundup\":9007199254740992}", &m, err),
        PROFD_EPROTO);
    assert_string_equal(err, "field 'roundup': integer out of range (|n| < 2^53)");
    /* the largest exact integers pass */
    assert_int_equal(decode("{\"v\":1,\"type\":\"events\",\"client\":1,"
                            "\"ev\":[1,9007199254740991,-9007199254740991]}",
                            &m, err),
                     0);
    assert_int_equal(m.u.events.ev[1], 9007199254740991LL);
    assert_int_equal(m.u.events.ev[2], -9007199254740991LL);
    /* and are written back exactly */
    char *buf;
    size_t len;
    m.u.events.client = 4503599627370497LL;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_string_equal(buf, "{\"v\":1,\"type\":\"events\",\"client\":4503599627370497,\"gen\":0,"
                             "\"ev\":[1,9007199254740991,-9007199254740991],\"dropped\":0}");
    free(buf);
    pp_msg_free(&m);
    /* steps are never negative */
    assert_int_equal(decode("{\"v\":1,\"type\":\"start\",\"steps\":[3,-2]}", &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'steps[1]': a step must be 0..2^53-1, found -2");
    assert_int_equal(decode("{\"v\":1,\"type\":\"start\",\"start\":-5}", &m, err), PROFD_EPROTO);
    assert_string_equal(err, "field 'start': a step must be 0..2^53-1, found -5");
    /* end -1 is "until the job ends" */
    assert_int_equal(decode("{\"v\":1,\"type\":\"start\",\"start\":5,\"end\":-1}", &m, err), 0);
    assert_int_equal(m.u.start.end, -1);
    pp_msg_free(&m);
    /* from command lines too */
    pp_window_spec_t s;
    pp_record_init(&pp_desc_window_spec, &s);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "next", "9200000000000000000", err,
                                       sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "expected an integer, found '9200000000000000000'");
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "steps", "1,-3", err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "expected steps like 1,2 (0..2^53-1), found '-3'");
    pp_record_free(&pp_desc_window_spec, &s);
}

static void test_codec_unknown_fields_ignored(void **state)
{
    pp_msg_t m;
    char err[256];
    assert_int_equal(decode("{\"v\":1,\"type\":\"stop\",\"id\":3,\"future\":{\"x\":1}}", &m, err),
                     0);
    assert_int_equal(m.u.stop.id, 3);
    assert_null(m.u.stop.job);
    pp_msg_free(&m);
}

static void test_codec_error_encode(void **state)
{
    char *buf;
    size_t len;
    pp_msg_t m;
    char err[256];
    assert_int_equal(pp_error_encode(PROFD_EPERM, "start needs a permitted uid", &buf, &len), 0);
    assert_int_equal(pp_msg_decode(buf, len, 0, &m, err, sizeof(err)), 0);
    assert_int_equal(m.type, PP_T_error);
    assert_int_equal(m.u.error.code, PROFD_EPERM);
    assert_string_equal(m.u.error.name, "EPERM");
    assert_string_equal(m.u.error.message, "start needs a permitted uid");
    pp_msg_free(&m);
    free(buf);
}

static void test_codec_names(void **state)
{
    char buf[128];
    assert_int_equal(pp_window_name(buf, sizeof(buf), 3, 2, 2), 0);
    assert_string_equal(buf, "w3-step2");
    assert_int_equal(pp_window_name(buf, sizeof(buf), 4, 5, 9), 0);
    assert_string_equal(buf, "w4-steps5-9");
    assert_int_equal(pp_window_name(buf, sizeof(buf), 5, 7, PP_NONE), 0);
    assert_string_equal(buf, "w5-from7");
    assert_int_equal(
        pp_capture_dir(buf, sizeof(buf), "actor", "update_actor", 0, PP_NONE, "node1", 0), 0);
    assert_string_equal(buf, "actor.update_actor/rank0-node1");
    assert_int_equal(pp_capture_dir(buf, sizeof(buf), "rollout", NULL, 4, 1, "n2.local", 0), 0);
    assert_string_equal(buf, "rollout/rank4-replica1-n2.local");
    /* a member whose rank and host another member of the window has */
    assert_int_equal(pp_capture_dir(buf, sizeof(buf), "e2e", NULL, 0, PP_NONE, "node1", 4242), 0);
    assert_string_equal(buf, "e2e/rank0-node1-pid4242");
    assert_int_equal(pp_capture_dir(buf, sizeof(buf), "ac/tor", NULL, 0, PP_NONE, "h", 0),
                     PROFD_EINVAL);
    assert_int_equal(pp_capture_dir(buf, sizeof(buf), "actor", "..", 0, PP_NONE, "h", 0),
                     PROFD_EINVAL);
    assert_int_equal(pp_capture_dir(buf, sizeof(buf), "actor", NULL, 0, PP_NONE, "../etc", 0),
                     PROFD_EINVAL);
    assert_int_equal(pp_capture_dir(buf, 8, "actor", NULL, 0, PP_NONE, "node1", 0), PROFD_EINVAL);
    assert_true(pp_ident_ok("update_actor"));
    assert_false(pp_ident_ok(""));
    assert_false(pp_ident_ok("a.b"));
    assert_false(pp_host_ok(".hidden"));
    assert_string_equal(profd_strerror(PROFD_EPERM), "permission denied");
    assert_string_equal(profd_errname(PROFD_ETOOBIG), "ETOOBIG");
    assert_int_equal(profd_errcode("EVERSION"), PROFD_EVERSION);
    assert_int_equal(profd_errcode("nope"), 0);
    assert_string_equal(profd_strerror(-999), "unknown error");
}

static void test_codec_settings_helpers(void **state)
{
    const char *s = "{\"bytes\":4096,\"analysis\":false,\"level\":\"level1\","
                    "\"contents\":[\"cpu\",\"npu\"]}";
    char buf[32];
    char names[4][PP_MAX_NAME];
    assert_int_equal(pp_json_get_i64(s, "bytes", 7), 4096);
    assert_int_equal(pp_json_get_i64(s, "level", 7), 7);
    assert_int_equal(pp_json_get_i64(NULL, "bytes", 7), 7);
    assert_false(pp_json_get_bool(s, "analysis", true));
    assert_true(pp_json_get_str(s, "level", buf, sizeof(buf), "x"));
    assert_string_equal(buf, "level1");
    assert_false(pp_json_get_str(s, "export_type", buf, sizeof(buf), "text"));
    assert_string_equal(buf, "text");
    assert_int_equal(pp_json_get_strs(s, "contents", names, 4), 2);
    assert_string_equal(names[1], "npu");
    assert_int_equal(pp_json_get_strs(s, "level", names, 4), -1);
}

/* States and modes are enumerations: names in, values out, and back. */
static void test_codec_enums(void **state)
{
    pp_msg_t m;
    char err[256], *buf;
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"start\",\"next\":2,\"mode\":\"sideways\"}", &m, err),
        PROFD_EPROTO);
    assert_string_equal(err,
                        "field 'mode': expected one of e2e, discrete, mixed, found 'sideways'");
    assert_int_equal(decode("{\"v\":1,\"type\":\"start\",\"next\":2,\"mode\":7}", &m, err),
                     PROFD_EPROTO);
    assert_string_equal(err, "field 'mode': expected string, found number");
    assert_int_equal(decode("{\"v\":1,\"type\":\"start\",\"next\":2,\"mode\":null}", &m, err), 0);
    assert_int_equal(m.u.start.mode, PP_MODE_NONE);
    pp_msg_free(&m);
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"start\",\"next\":2,\"mode\":\"discrete\"}", &m, err), 0);
    assert_int_equal(m.u.start.mode, PP_MODE_DISCRETE);
    assert_int_equal(pp_msg_encode(&m, &buf, NULL), 0);
    assert_non_null(strstr(buf, "\"mode\":\"discrete\""));
    free(buf);
    pp_msg_free(&m);
    /* a capture status the daemon does not know decodes (PP_LAX), as
     * "none": the report checks refuse it with a reason */
    assert_int_equal(decode("{\"v\":1,\"type\":\"result\",\"client\":1,\"window\":2,"
                            "\"captures\":[{\"role\":\"actor\",\"status\":\"exploded\"},"
                            "{\"role\":\"actor\",\"status\":\"truncated\"}]}",
                            &m, err),
                     0);
    assert_int_equal(m.u.result.captures[0].status, PP_CAP_NONE);
    assert_int_equal(m.u.result.captures[1].status, PP_CAP_TRUNCATED);
    pp_msg_free(&m);
    /* the names table */
    assert_string_equal(pp_status_name(PP_CAP_MISSED), "missed");
    assert_null(pp_status_name(PP_CAP_NONE));
    assert_null(pp_enum_name(&pp_enum_window_state, 99));
    assert_int_equal(pp_enum_value(&pp_enum_window_state, "gathering"), PP_WS_GATHERING);
    assert_int_equal(pp_enum_value(&pp_enum_member_state, "nobody"), 0);
}

/* Fields set from command-line text, by the field's kind. */
static void test_codec_field_from_text(void **state)
{
    pp_window_spec_t s;
    pp_selector_t sel;
    char err[160];
    pp_record_init(&pp_desc_window_spec, &s);
    pp_record_init(&pp_desc_selector, &sel);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "next", "3", err, sizeof(err)), 0);
    assert_int_equal(s.next, 3);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "next", "3x", err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "expected an integer, found '3x'");
    assert_int_equal(s.next, 3); /* unchanged on error */
    assert_int_equal(
        pp_field_set_text(&pp_desc_window_spec, &s, "steps", "2,4,8", err, sizeof(err)), 0);
    assert_int_equal(s.steps_n, 3);
    assert_int_equal(s.steps[2], 8);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "steps", "1,,2", err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "expected a comma-separated list without empty elements");
    assert_int_equal(s.steps_n, 3);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "mode", "e2e", err, sizeof(err)),
                     0);
    assert_int_equal(s.mode, PP_MODE_E2E);
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "mode", "both", err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "expected a mode name, found 'both'");
    assert_int_equal(
        pp_field_set_text(&pp_desc_window_spec, &s, "continuous", "true", err, sizeof(err)), 0);
    assert_true(s.continuous);
    assert_int_equal(
        pp_field_set_text(&pp_desc_window_spec, &s, "settings", "[1]", err, sizeof(err)),
        PROFD_EINVAL);
    assert_string_equal(err, "expected a JSON object");
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "tool", "npu", err, sizeof(err)),
                     0);
    assert_string_equal(s.tool, "npu");
    assert_int_equal(pp_field_set_text(&pp_desc_window_spec, &s, "colour", "red", err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "no field 'colour' in window_spec");
    assert_int_equal(pp_field_set_text(&pp_desc_selector, &sel, "phases", "generate,update_actor",
                                       err, sizeof(err)),
                     0);
    assert_int_equal(sel.phases_n, 2);
    assert_string_equal(sel.phases[1], "update_actor");
    assert_int_equal(
        pp_field_set_text(&pp_desc_selector, &sel, "phases", "a,b/c", err, sizeof(err)),
        PROFD_EINVAL);
    assert_string_equal(err, "expected names like a,b ([A-Za-z0-9_-]), found 'b/c'");
    assert_int_equal(sel.phases_n, 2);
    pp_record_free(&pp_desc_window_spec, &s);
    pp_record_free(&pp_desc_selector, &sel);
}

/* Pre-encoded elements (pp_record_encode_hooked): element 1 of the nodes
 * comes from the hook as it is, the others are encoded; a hook's failure
 * fails the encoding. */
static int hook_nodes(void *arg, const pp_field_t *f, const void *rec, size_t i, const char **text,
                      size_t *len)
{
    int *calls = arg;
    (void)rec;
    (*calls)++;
    if (f->sub != &pp_desc_state_node || i == 0) {
        return 0;
    }
    if (i == 2) {
        return -1;
    }
    *text = "{\"name\":\"cached\",\"instance\":\"c1\"}";
    *len = strlen(*text);
    return 1;
}

static void test_codec_hooked_elements(void **state)
{
    pp_state_t st;
    pp_state_node_t nodes[3] = {{.name = "n0", .instance = "i0"},
                                {.name = "ignored", .instance = "ignored"},
                                {.name = "n2", .instance = "i2"}};
    int calls = 0;
    pp_elem_hook_t hook = {.elem = hook_nodes, .arg = &calls};
    char *buf = NULL, *plain = NULL;
    size_t len = 0;
    (void)state;
    pp_record_init(&pp_desc_state, &st);
    st.version = 1;
    st.instance = "abc";
    st.nodes = nodes;
    st.nodes_n = 2;
    assert_int_equal(pp_record_encode_hooked(&pp_desc_state, &st, &hook, &buf, &len), 0);
    assert_string_equal(buf, "{\"version\":1,\"instance\":\"abc\",\"next_id\":0,\"nodes\":["
                             "{\"name\":\"n0\",\"instance\":\"i0\"},"
                             "{\"name\":\"cached\",\"instance\":\"c1\"}],\"windows\":[]}");
    assert_int_equal(len, strlen(buf));
    assert_int_equal(calls, 2);
    free(buf);
    /* a hook that gives nothing: the same text as pp_record_encode */
    nodes[1].name = "cached";
    nodes[1].instance = "c1";
    assert_int_equal(pp_record_encode(&pp_desc_state, &st, false, &plain, NULL), 0);
    st.nodes_n = 1;
    assert_int_equal(pp_record_encode_hooked(&pp_desc_state, &st, &hook, &buf, NULL), 0);
    assert_string_equal(buf, "{\"version\":1,\"instance\":\"abc\",\"next_id\":0,\"nodes\":["
                             "{\"name\":\"n0\",\"instance\":\"i0\"}],\"windows\":[]}");
    free(buf);
    st.nodes_n = 2;
    calls = 0;
    hook.elem = NULL;
    assert_int_equal(pp_record_encode_hooked(&pp_desc_state, &st, &hook, &buf, NULL), PROFD_EINVAL);
    hook.elem = hook_nodes;
    assert_int_equal(pp_record_encode_hooked(&pp_desc_state, &st, &hook, &buf, NULL), 0);
    assert_string_equal(buf, plain);
    free(buf);
    free(plain);
    st.nodes_n = 3;
    buf = NULL;
    assert_int_equal(pp_record_encode_hooked(&pp_desc_state, &st, &hook, &buf, NULL), PROFD_ENOMEM);
    assert_null(buf);
}

/* A manifest encoded to a sink, piece by piece, is byte for byte the text
 * encoded whole (pretty and compact), in pieces of about PP_SINK_PIECE
 * bytes (never past it by more than one capture's record), never the
 * whole text at once; a sink's error stops the encoding and is returned. */
static void test_codec_encode_to_a_sink(void **state)
{
    (void)state;
    enum { NCAPS = 2000 };
    pp_manifest_t man;
    pp_capture_t *cap = calloc(NCAPS, sizeof(*cap));
    pp_file_t file;
    int64_t steps[] = {5, 7};
    char *warnings[] = {"1 selected rank(s) already began step 5 or later: they will report "
                        "missed"};
    assert_non_null(cap);
    manifest4(&man, "run", "w4-steps5-6", steps, "{\"bytes\":1000,\"with\":[1,{\"a\":\"b\"}]}");
    man.window.warnings = warnings;
    man.window.warnings_n = 1;
    pp_record_init(&pp_desc_file, &file);
    file.path = "rank0-actor.1700000000000.pt.trace.json";
    file.bytes = 123456;
    file.checksum = "xxh64:0123456789abcdef";
    for (int i = 0; i < NCAPS; i++) {
        pp_record_init(&pp_desc_capture, &cap[i]);
        cap[i].role = i % 3 ? "actor" : "rollout";
        cap[i].phase = i % 2 ? "generate" : NULL;
        cap[i].rank = i;
        cap[i].host = "node-7";
        cap[i].pid = 4000 + i;
        cap[i].first_step = 5;
        cap[i].last_step = 6;
        cap[i].status = i % 5 ? PP_CAP_COMPLETE : PP_CAP_FAILED;
        cap[i].reason = i % 5 ? NULL : "out of memory \"at\" step 6";
        cap[i].dir = i % 5 ? "e2e/rank0-node-7" : NULL;
        cap[i].files = i % 5 ? &file : NULL;
        cap[i].files_n = i % 5 ? 1 : 0;
    }
    man.captures = cap;
    man.captures_n = NCAPS;
    for (int pretty = 0; pretty < 2; pretty++) {
        char *whole, *one;
        size_t len, onelen;
        assert_int_equal(pp_record_encode(&pp_desc_manifest, &man, pretty, &whole, &len), 0);
        sink_got_t got = {0};
        pp_sink_t sink = {.put = sink_got_put, .arg = &got};
        assert_int_equal(pp_record_encode_to(&pp_desc_manifest, &man, pretty, &sink), 0);
        assert_int_equal(got.len, len);
        assert_memory_equal(got.text, whole, len);
        assert_int_equal(pp_record_encode(&pp_desc_capture, &cap[1], pretty, &one, &onelen), 0);
        assert_true(len > 4 * PP_SINK_PIECE);
        assert_true(got.pieces >= len / (PP_SINK_PIECE + 4 * onelen));
        assert_true(got.largest < PP_SINK_PIECE + 4 * onelen); /* a capture, tabs and all */
        free(one);
        free(got.text);
        /* the sink refuses its second piece: no more is encoded */
        sink_got_t bad = {.fail_at = 2};
        sink.arg = &bad;
        assert_int_equal(pp_record_encode_to(&pp_desc_manifest, &man, pretty, &sink), PROFD_EIO);
        assert_int_equal(bad.pieces, 2);
        assert_true(bad.len > 0 && bad.len < len);
        assert_memory_equal(bad.text, whole, bad.len);
        free(bad.text);
        free(whole);
    }
    pp_sink_t none = {.put = NULL};
    assert_int_equal(pp_record_encode_to(&pp_desc_manifest, &man, true, &none), PROFD_EINVAL);
    free(cap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_hello_roundtrip),
        cmocka_unit_test(test_codec_nested_roundtrip),
        cmocka_unit_test(test_codec_copy_is_deep),
        cmocka_unit_test(test_codec_record_equal),
        cmocka_unit_test(test_codec_manifest_nulls),
        cmocka_unit_test(test_codec_prints_as_cjson),
        cmocka_unit_test(test_codec_rejects),
        cmocka_unit_test(test_codec_integers_bounded),
        cmocka_unit_test(test_codec_unknown_fields_ignored),
        cmocka_unit_test(test_codec_error_encode),
        cmocka_unit_test(test_codec_names),
        cmocka_unit_test(test_codec_settings_helpers),
        cmocka_unit_test(test_codec_enums),
        cmocka_unit_test(test_codec_field_from_text),
        cmocka_unit_test(test_codec_hooked_elements),
        cmocka_unit_test(test_codec_encode_to_a_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
