// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Codec: the batch messages between a node and its coordinator (node_results,
 * chunks, their replies and the welcome's capabilities). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "profd/proto.h"

static int decode(const char *json, pp_msg_t *m, char *err)
{
    return pp_msg_decode(json, strlen(json), 0, m, err, 256);
}

/* Items of node_results already encoded: text[i], len[i]. */
typedef struct texts {
    char *text[2];
    size_t len[2];
} texts_t;

static int hook_texts(void *arg, const pp_field_t *f, const void *rec, size_t i, const char **text,
                      size_t *len)
{
    const texts_t *t = arg;
    (void)f;
    (void)rec;
    *text = t->text[i];
    *len = t->len[i];
    return 1;
}

/* A node's batch of results (node_results) and its reply round trip; the
 * node's encoding, each item encoded once and spliced in, is byte for byte
 * the batch encoded whole; node_welcome's `batches`, absent from an older
 * coordinator's, decodes as false. */
/* node_welcome with the two capabilities as given: its exact text, and
 * both read back as sent. */
static void welcome_round_trip(bool batches, bool files, const char *want)
{
    pp_msg_t m, back;
    char *buf;
    size_t len;
    char err[256];

    pp_msg_init(&m, PP_T_node_welcome);
    m.u.node_welcome.instance = "abc";
    m.u.node_welcome.batches = batches;
    m.u.node_welcome.files = files;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_string_equal(buf, want);
    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(back.u.node_welcome.batches, batches);
    assert_int_equal(back.u.node_welcome.files, files);
    pp_msg_free(&back);
    free(buf);
}

static void test_codec_node_results(void **state)
{
    pp_msg_t m, back;
    pp_file_t file = {.path = "trace.json", .bytes = 3000, .checksum = "xxh64:00000000000000ff"};
    pp_capture_t cap;
    pp_node_result_item_t items[2];
    texts_t texts;
    char *buf, *spliced, err[256];
    size_t len, slen;
    (void)state;
    pp_record_init(&pp_desc_capture, &cap);
    cap.role = "e2e";
    cap.rank = 3;
    cap.host = "host1";
    cap.pid = 4242;
    cap.first_step = 5;
    cap.last_step = 5;
    cap.status = PP_CAP_COMPLETE;
    cap.dir = "e2e/rank3-host1";
    cap.files = &file;
    cap.files_n = 1;
    for (int i = 0; i < 2; i++) {
        pp_record_init(&pp_desc_node_result_item, &items[i]);
        items[i].window = 9;
        items[i].client = 7 + i;
    }
    items[0].captures = &cap;
    items[0].captures_n = 1;
    pp_msg_init(&m, PP_T_node_results);
    m.u.node_results.node = "node1";
    m.u.node_results.instance = "0123456789abcdef";
    m.u.node_results.items = items;
    m.u.node_results.items_n = 2;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_string_equal(
        buf,
        "{\"v\":1,\"type\":\"node_results\",\"node\":\"node1\",\"instance\":\"0123456789abcdef\","
        "\"items\":[{\"window\":9,\"client\":7,\"captures\":[{\"role\":\"e2e\",\"phase\":null,"
        "\"rank\":3,\"replica_rank\":null,\"host\":\"host1\",\"pid\":4242,\"first_step\":5,"
        "\"last_step\":5,\"status\":\"complete\",\"reason\":null,\"dir\":\"e2e/rank3-host1\","
        "\"files\":[{\"path\":\"trace.json\",\"bytes\":3000,\"checksum\":"
        "\"xxh64:00000000000000ff\"}]}]},{\"window\":9,\"client\":8,\"captures\":[]}]}");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pp_record_encode(&pp_desc_node_result_item, &items[i], false,
                                          &texts.text[i], &texts.len[i]),
                         0);
    }
    pp_elem_hook_t hook = {hook_texts, &texts};
    assert_int_equal(pp_msg_encode_hooked(&m, &hook, &spliced, &slen), 0);
    assert_string_equal(spliced, buf);
    assert_int_equal(slen, len);
    hook.elem = NULL;
    assert_int_equal(pp_msg_encode_hooked(&m, &hook, &spliced, &slen), PROFD_EINVAL);
    free(texts.text[0]);
    free(texts.text[1]);

    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(back.type, PP_T_node_results);
    assert_int_equal(pp_type_access(PP_T_node_results), PP_ACC_NODE);
    assert_int_equal(pp_type_from_name("node_results"), 60);
    assert_string_equal(back.u.node_results.node, "node1");
    assert_int_equal(back.u.node_results.items_n, 2);
    assert_int_equal(back.u.node_results.items[1].client, 8);
    assert_int_equal(back.u.node_results.items[1].captures_n, 0);
    assert_true(
        pp_record_equal(&pp_desc_node_result_item, &back.u.node_results.items[0], &items[0]));
    pp_msg_free(&back);
    free(spliced);
    free(buf);

    /* each item's outcome, in order */
    int64_t codes[] = {0, PROFD_ENOENT, 0};
    char *messages[] = {"", "node node1 has no client 9", ""};
    pp_msg_init(&m, PP_T_node_results_reply);
    m.u.node_results_reply.codes = codes;
    m.u.node_results_reply.codes_n = 3;
    m.u.node_results_reply.messages = messages;
    m.u.node_results_reply.messages_n = 3;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_string_equal(buf, "{\"v\":1,\"type\":\"node_results_reply\",\"codes\":[0,-11,0],"
                             "\"messages\":[\"\",\"node node1 has no client 9\",\"\"]}");
    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(pp_type_access(PP_T_node_results_reply), PP_ACC_REPLY);
    assert_int_equal(back.u.node_results_reply.codes_n, 3);
    assert_int_equal(back.u.node_results_reply.codes[1], PROFD_ENOENT);
    assert_int_equal(back.u.node_results_reply.messages_n, 3);
    assert_string_equal(back.u.node_results_reply.messages[0], "");
    assert_string_equal(back.u.node_results_reply.messages[1], "node node1 has no client 9");
    pp_msg_free(&back);
    free(buf);

    /* the capability */
    welcome_round_trip(true, false,
                       "{\"v\":1,\"type\":\"node_welcome\",\"instance\":\"abc\",\"gen\":0,"
                       "\"save_path\":null,\"batches\":true,\"files\":false}");
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"node_welcome\",\"instance\":\"abc\",\"gen\":4}", &back, err),
        0);
    assert_false(back.u.node_welcome.batches);
    assert_int_equal(back.u.node_welcome.gen, 4);
    pp_msg_free(&back);
}

/* Whole small files in one request (chunks, issue 30): the items with
 * their exact fields, the files' bytes after the NUL in the items' order,
 * a node's request; the reply's codes and messages in order; node_welcome's
 * `files` (absent from an older coordinator: false). */
static void test_codec_chunks(void **state)
{
    (void)state;
    char err[256], *buf;
    size_t len, plen;
    const void *payload;
    pp_msg_t m, back;
    pp_chunk_item_t items[2] = {
        {.window = 3,
         .path = "r0/a.json",
         .len = 5,
         .size = 5,
         .checksum = "xxh64:00000000000000ab"},
        {.window = 4, .path = "r1/empty", .len = 0, .size = 0, .checksum = NULL},
    };
    pp_msg_init(&m, PP_T_chunks);
    m.u.chunks.node = "node1";
    m.u.chunks.items = items;
    m.u.chunks.items_n = 2;
    assert_int_equal(pp_frame_encode(&m, "hello", 5, &buf, &len), 0);
    const char *json = "{\"v\":1,\"type\":\"chunks\",\"node\":\"node1\",\"items\":["
                       "{\"window\":3,\"path\":\"r0/a.json\",\"len\":5,\"size\":5,"
                       "\"checksum\":\"xxh64:00000000000000ab\"},"
                       "{\"window\":4,\"path\":\"r1/empty\",\"len\":0,\"size\":0,"
                       "\"checksum\":null}]}";
    assert_int_equal(len, strlen(json) + 1 + 5);
    assert_memory_equal(buf, json, strlen(json) + 1);
    assert_memory_equal(buf + strlen(json) + 1, "hello", 5);
    size_t jl = pp_frame_split(buf, len, &payload, &plen);
    assert_int_equal(jl, strlen(json));
    assert_int_equal(plen, 5);
    assert_int_equal(pp_msg_decode(buf, jl, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(back.type, PP_T_chunks);
    assert_int_equal(pp_type_access(PP_T_chunks), PP_ACC_NODE);
    assert_string_equal(back.u.chunks.node, "node1");
    assert_int_equal(back.u.chunks.items_n, 2);
    assert_true(pp_record_equal(&pp_desc_chunk_item, &back.u.chunks.items[0], &items[0]));
    assert_null(back.u.chunks.items[1].checksum);
    assert_true(pp_record_equal(&pp_desc_chunk_item, &back.u.chunks.items[1], &items[1]));
    pp_msg_free(&back);
    free(buf);
    int64_t codes[] = {0, PROFD_EINVAL};
    char *messages[] = {"", "r1/empty is not the whole file of 7 bytes"};
    pp_msg_init(&m, PP_T_chunks_reply);
    m.u.chunks_reply.codes = codes;
    m.u.chunks_reply.codes_n = 2;
    m.u.chunks_reply.messages = messages;
    m.u.chunks_reply.messages_n = 2;
    assert_int_equal(pp_msg_encode(&m, &buf, &len), 0);
    assert_string_equal(buf, "{\"v\":1,\"type\":\"chunks_reply\",\"codes\":[0,-1],"
                             "\"messages\":[\"\",\"r1/empty is not the whole file of 7 bytes\"],"
                             "\"busy_ms\":0}");
    assert_int_equal(pp_msg_decode(buf, len, 0, &back, err, sizeof(err)), 0);
    assert_int_equal(pp_type_access(PP_T_chunks_reply), PP_ACC_REPLY);
    assert_int_equal(back.u.chunks_reply.codes_n, 2);
    assert_int_equal(back.u.chunks_reply.codes[1], PROFD_EINVAL);
    assert_string_equal(back.u.chunks_reply.messages[1],
                        "r1/empty is not the whole file of 7 bytes");
    assert_int_equal(back.u.chunks_reply.busy_ms, 0);
    pp_msg_free(&back);
    free(buf);
    /* busy: none taken, the same files again after busy_ms; absent is 0 */
    assert_int_equal(decode("{\"v\":1,\"type\":\"chunks_reply\",\"codes\":[-13],\"messages\":"
                            "[\"busy\"],\"busy_ms\":150}",
                            &back, err),
                     0);
    assert_int_equal(back.u.chunks_reply.busy_ms, 150);
    assert_int_equal(back.u.chunks_reply.codes[0], PROFD_ELIMIT);
    pp_msg_free(&back);
    assert_int_equal(
        decode("{\"v\":1,\"type\":\"chunks_reply\",\"codes\":[],\"messages\":[]}", &back, err), 0);
    assert_int_equal(back.u.chunks_reply.busy_ms, 0);
    pp_msg_free(&back);

    welcome_round_trip(false, true,
                       "{\"v\":1,\"type\":\"node_welcome\",\"instance\":\"abc\",\"gen\":0,"
                       "\"save_path\":null,\"batches\":false,\"files\":true}");
    assert_int_equal(decode("{\"v\":1,\"type\":\"node_welcome\",\"instance\":\"abc\",\"gen\":4,"
                            "\"batches\":true}",
                            &back, err),
                     0);
    assert_false(back.u.node_welcome.files);
    pp_msg_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_node_results),
        cmocka_unit_test(test_codec_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
