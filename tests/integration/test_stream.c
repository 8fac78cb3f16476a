// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Files streamed to a coordinator: the coordinator core running in a thread
 * of this process, a node daemon played by hand over nng (hello, result,
 * chunks as the node link sends them). The coordinator writes each file as
 * .part and renames it once the whole file matches the checksum its node
 * listed. A chunk changed in flight: the .part goes, the coordinator asks
 * for the file again from byte 0, and the file sent again intact lands. A
 * node whose file never matches what it listed: after
 * PD_REMOTE_MAX_MISMATCHES transfers the capture fails with the reason and
 * the node is told to drop the file, instead of sending it for ever.
 * Chunks pipelined (several of a file in flight, as a node sends them):
 * the coordinator writes only the file's first bytes, in order, whatever
 * order the chunks arrive in; a chunk ahead of them with nothing being
 * written is answered with what the file holds, and a restart resumes
 * from there with the hash still right. Once the window is done and
 * compacted (its members freed), a chunk sent again is answered from its
 * manifest and a result sent again is acknowledged. Whole small files in
 * one request (chunks): each item's outcome, a file sent again settled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "daemon_fixture.h"
#include "pd_skip.h"
#include "remote.h"
#include "wcaps.h" /* PD_WCAPS_KEEP_MS */

#define NODE     "node1"
#define INSTANCE "0123456789abcdef"
#define CAPDIR   "e2e/rank0-host1"
#define SIZE     3000
#define CHUNK    1000

FX_TMP_FIXTURE("profd-stream")

/* ---- requests ---- */

/* The node registers with one worker (its client 7, rank 0 of job j). */
static nng_socket node_join(const fx_daemon_t *r)
{
    pp_msg_t rep;
    nng_socket s = fx_dial(r->cfg.coordinator_listen);
    assert_int_equal(fx_ask(s,
                            "{\"v\":1,\"type\":\"node_hello\",\"node\":\"" NODE
                            "\",\"instance\":\"" INSTANCE
                            "\",\"ranks\":[{\"client\":7,\"job\":\"j\","
                            "\"role\":\"actor\",\"rank\":0,\"host\":\"host1\",\"pid\":4242}]}",
                            &rep),
                     0);
    assert_int_equal(rep.type, PP_T_node_welcome);
    pp_msg_free(&rep);
    return s;
}

/* Window 1, step 5, every rank of job j: w1-step5. */
static void start_window(const fx_daemon_t *r)
{
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"job\":\"j\",\"steps\":[5],\"tool\":\"sim\"}",
                    "w1-step5", 1);
}

/* The node's result for window 1: one capture, one file of SIZE bytes
 * with the checksum `sum`. */
static void node_result(nng_socket s, const char *sum)
{
    char q[1024];
    pp_msg_t rep;
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"node_result\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE
             "\",\"window\":1,\"client\":7,\"captures\":[{\"role\":\"e2e\",\"rank\":0,"
             "\"host\":\"host1\",\"pid\":4242,\"first_step\":5,\"last_step\":5,"
             "\"status\":\"complete\",\"dir\":\"" CAPDIR "\",\"files\":[{\"path\":\"trace.json\","
             "\"bytes\":%d,\"checksum\":\"%s\"}]}]}",
             SIZE, sum);
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_ack);
    pp_msg_free(&rep);
}

/* The framed chunk of capture file `path` (under CAPDIR): data[offset,
 * offset + len), with the file's checksum `sum` (NULL: none); *buf is the
 * caller's to free. */
static void chunk_frame(const char *path, const char *data, int64_t offset, int64_t len,
                        const char *sum, char **buf, size_t *blen)
{
    char full[128];
    pp_msg_t m;
    snprintf(full, sizeof(full), "%s/%s", CAPDIR, path);
    pp_msg_init(&m, PP_T_chunk);
    m.u.chunk.node = NODE;
    m.u.chunk.window = 1;
    m.u.chunk.path = full;
    m.u.chunk.offset = offset;
    m.u.chunk.len = len;
    m.u.chunk.size = SIZE;
    m.u.chunk.checksum = (char *)sum;
    assert_int_equal(pp_frame_encode(&m, data + offset, (size_t)len, buf, blen), 0);
}

/* One chunk of `path`; the coordinator's answer in *have and *done. */
static void chunk_of(nng_socket s, const char *path, const char *data, int64_t offset, int64_t len,
                     const char *sum, int64_t *have, bool *done)
{
    pp_msg_t rep;
    char *buf;
    size_t blen;
    chunk_frame(path, data, offset, len, sum, &buf, &blen);
    int rv = fx_ask_raw(s, buf, blen, &rep);
    free(buf);
    if (rv != 0) {
        fail_msg("chunk at %lld refused: %s", (long long)offset, rep.u.error.message);
    }
    assert_int_equal(rep.type, PP_T_chunk_ack);
    *have = rep.u.chunk_ack.have;
    *done = rep.u.chunk_ack.done;
    pp_msg_free(&rep);
}

/* One chunk of trace.json: data[offset, offset + len). */
static void chunk(nng_socket s, const char *data, int64_t offset, int64_t len, const char *sum,
                  int64_t *have, bool *done)
{
    chunk_of(s, "trace.json", data, offset, len, sum, have, done);
}

/* The whole file, chunk by chunk, as long as the coordinator takes it;
 * the last answer in *have and *done. */
static void send_file(nng_socket s, const char *data, const char *sum, int64_t *have, bool *done)
{
    for (int64_t off = 0; off < SIZE; off += CHUNK) {
        chunk(s, data, off, CHUNK, sum, have, done);
        if (*done || *have != off + CHUNK) {
            return;
        }
    }
}

static void pattern(char *data, unsigned seed)
{
    for (size_t i = 0; i < SIZE; i++) {
        data[i] = (char)('a' + (i * 7 + seed) % 26);
    }
}

static void sum_of(const char *data, char *sum, size_t len)
{
    snprintf(sum, len, "xxh64:%016llx", (unsigned long long)XXH64(data, SIZE, 0));
}

static void wait_done(const fx_daemon_t *r)
{
    fx_wait_state(r->cfg.control_url, 1, "done", NULL, 0);
}

static void read_manifest(const fx_daemon_t *r, pp_manifest_t *man)
{
    char path[1024], err[256], buf[65536];
    fx_path_of(path, sizeof(path), "%s/j/w1-step5/manifest.json", r->cfg.save_path);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fail_msg("no manifest %s: %s", path, strerror(errno));
    }
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_int_equal(pp_record_decode(&pp_desc_manifest, buf, n, man, err, sizeof(err)), 0);
}

/* The node joins, window 1 starts and the node lists trace.json with the
 * checksum `sum`; where its .part and the file land in part and file
 * (1024 bytes each). The node's connection. */
static nng_socket stream_begin(const fx_daemon_t *r, const char *sum, char *part, char *file)
{
    fx_path_of(part, 1024, "%s/j/w1-step5/" CAPDIR "/trace.json.part", r->cfg.save_path);
    fx_path_of(file, 1024, "%s/j/w1-step5/" CAPDIR "/trace.json", r->cfg.save_path);
    nng_socket s = node_join(r);
    start_window(r);
    node_result(s, sum);
    return s;
}

/* Chunks sent on connections of their own, all in flight at once, in the
 * order given; their answers in have[] and done[]. */
static void chunks_at_once(const fx_daemon_t *r, const char *data, const int64_t *offsets, int n,
                           const char *sum, int64_t *have, bool *done)
{
    nng_socket s[8];
    assert_true(n <= 8);
    for (int i = 0; i < n; i++) {
        s[i] = fx_dial(r->cfg.coordinator_listen);
    }
    for (int i = 0; i < n; i++) {
        char *buf;
        size_t blen;
        chunk_frame("trace.json", data, offsets[i], CHUNK, offsets[i] + CHUNK == SIZE ? sum : NULL,
                    &buf, &blen);
        assert_int_equal(nng_send(s[i], buf, blen, 0), 0);
        free(buf);
    }
    for (int i = 0; i < n; i++) {
        char *buf;
        size_t blen;
        pp_msg_t rep;
        assert_int_equal(nng_recv(s[i], &buf, &blen, NNG_FLAG_ALLOC), 0);
        assert_int_equal(pp_reply_decode(buf, blen, 0, &rep, NULL, 0), 0);
        nng_free(buf, blen);
        assert_int_equal(rep.type, PP_T_chunk_ack);
        assert_int_equal(rep.u.chunk_ack.queue, PD_REMOTE_QUEUE);
        have[i] = rep.u.chunk_ack.have;
        done[i] = rep.u.chunk_ack.done;
        pp_msg_free(&rep);
        nng_close(s[i]);
    }
}

static void assert_file(const char *file, const char *data)
{
    char got[SIZE];
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, SIZE, f), SIZE);
    assert_int_equal(fgetc(f), EOF);
    fclose(f);
    assert_memory_equal(got, data, SIZE);
}

static void assert_manifest_sum(const fx_daemon_t *r, const char *sum)
{
    pp_manifest_t man;
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 1);
    assert_string_equal(pp_status_name(man.captures[0].status), "complete");
    assert_int_equal(man.captures[0].files_n, 1);
    assert_string_equal(man.captures[0].files[0].checksum, sum);
    pp_record_free(&pp_desc_manifest, &man);
}

/* ---- tests ---- */

/* The last chunk of a file has a byte changed in flight: the coordinator
 * drops the .part and answers 0 bytes held, not done; the node sends the
 * file again from its start, and it lands verified, its checksum in the
 * manifest. A chunk sent again after that is acknowledged as done. */
static void test_stream_corrupt_chunk_is_sent_again(void **state)
{
    char data[SIZE], bad[SIZE], sum[32], part[1024], file[1024];
    int64_t have;
    bool done;
    struct stat st;
    pattern(data, 1);
    memcpy(bad, data, SIZE);
    bad[SIZE - 10] ^= 0x01;
    sum_of(data, sum, sizeof(sum));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = stream_begin(r, sum, part, file);

    chunk(s, data, 0, CHUNK, sum, &have, &done);
    assert_int_equal(have, CHUNK);
    assert_false(done);
    chunk(s, data, CHUNK, CHUNK, sum, &have, &done);
    assert_int_equal(have, 2 * CHUNK);
    assert_false(done);
    assert_int_equal(stat(part, &st), 0);
    assert_int_equal(st.st_size, 2 * CHUNK);
    chunk(s, bad, 2 * CHUNK, CHUNK, sum, &have, &done);
    assert_int_equal(have, 0); /* again from the start */
    assert_false(done);
    assert_false(fx_exists(part));
    assert_false(fx_exists(file));

    send_file(s, data, sum, &have, &done);
    assert_int_equal(have, SIZE);
    assert_true(done);
    assert_false(fx_exists(part));
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_size, SIZE);
    chunk(s, data, 2 * CHUNK, CHUNK, sum, &have, &done); /* the reply was lost: resent */
    assert_int_equal(have, SIZE);
    assert_true(done);

    wait_done(r);
    /* every chunk answered: none left parked (a chunk written on the pool,
     * whose last ack then waited for a save, was once counted twice) */
    assert_int_equal(pd_coord_parked(r->d.coord), 0);
    pp_manifest_t man;
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 1);
    assert_string_equal(pp_status_name(man.captures[0].status), "complete");
    assert_null(man.captures[0].reason);
    assert_string_equal(man.captures[0].dir, CAPDIR);
    assert_int_equal(man.captures[0].files_n, 1);
    assert_string_equal(man.captures[0].files[0].path, "trace.json");
    assert_int_equal(man.captures[0].files[0].bytes, SIZE);
    assert_string_equal(man.captures[0].files[0].checksum, sum);
    pp_record_free(&pp_desc_manifest, &man);
    char got[SIZE];
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, SIZE, f), SIZE);
    fclose(f);
    assert_memory_equal(got, data, SIZE);

    /* the journal holds the window done: compacted, its files' list gone
     * from memory; a chunk sent again is answered from its manifest as
     * before (read back once for a burst of them: kept PD_WCAPS_KEEP_MS),
     * a file it never listed refused, and without its manifest the
     * answer is an error that says so */
    const pd_window_t *w = pd_windows_get(&r->d.win, 1);
    for (int t = 0; t < 400 && !__atomic_load_n(&w->compact, __ATOMIC_SEQ_CST); t++) {
        fx_sleep_ms(10);
    }
    assert_true(w->compact);
    assert_null(w->incoming);
    assert_null(__atomic_load_n(&w->members, __ATOMIC_SEQ_CST)); /* its members gone too */
    assert_int_equal(w->kept.ranks, 1);
    /* the node's result sent again (our ack lost): acknowledged, with its
     * members gone as with them (it has every member's) */
    node_result(s, sum);
    chunk(s, data, 2 * CHUNK, CHUNK, sum, &have, &done);
    assert_int_equal(have, SIZE);
    assert_true(done);
    char *buf, man_path[1024], away[1100];
    size_t blen;
    chunk_frame("other.json", data, 0, CHUNK, sum, &buf, &blen);
    pp_msg_t rep;
    assert_int_equal(fx_ask_raw(s, buf, blen, &rep), PROFD_ENOENT);
    assert_string_equal(rep.u.error.message,
                        "window w1-step5 expects no file " CAPDIR "/other.json from " NODE);
    pp_msg_free(&rep);
    free(buf);
    fx_path_of(man_path, sizeof(man_path), "%s/manifest.json", w->dir);
    fx_path_of(away, sizeof(away), "%s.away", man_path);
    int64_t t0 = fx_now_ms();
    assert_false(__atomic_load_n(&w->compact, __ATOMIC_SEQ_CST)); /* read back, kept */
    assert_int_equal(rename(man_path, away), 0);
    chunk_frame("trace.json", data, 2 * CHUNK, CHUNK, sum, &buf, &blen);
    int rv = fx_ask_raw(s, buf, blen, &rep); /* answered from what was read */
    free(buf);
    if (fx_now_ms() - t0 < PD_WCAPS_KEEP_MS) {
        assert_int_equal(rv, 0);
        assert_int_equal(rep.type, PP_T_chunk_ack);
        assert_int_equal(rep.u.chunk_ack.have, SIZE);
        assert_true(rep.u.chunk_ack.done);
    }
    pp_msg_free(&rep);
    for (int t = 0; t < 400 && !__atomic_load_n(&w->compact, __ATOMIC_SEQ_CST); t++) {
        fx_sleep_ms(10); /* the daemon's tick compacts it again */
    }
    assert_true(w->compact);
    chunk_frame("trace.json", data, 0, CHUNK, sum, &buf, &blen);
    assert_int_equal(fx_ask_raw(s, buf, blen, &rep), PROFD_EIO);
    char want[1200];
    fx_path_of(want, sizeof(want), "window 1: its captures cannot be read back: %s: ", man_path);
    assert_int_equal(strncmp(rep.u.error.message, want, strlen(want)), 0);
    pp_msg_free(&rep);
    free(buf);
    assert_int_equal(rename(away, man_path), 0);
    chunk(s, data, 0, CHUNK, sum, &have, &done); /* and serves on */
    assert_int_equal(have, SIZE);
    assert_true(done);

    nng_close(s);
    fx_daemon_free(r);
}

/* The node listed a checksum its file does not have (it changed on the
 * node after the listing): every transfer fails the check. After
 * PD_REMOTE_MAX_MISMATCHES of them the coordinator gives up: the capture
 * fails with the reason, the node is told the file is done (so that it
 * drops it), nothing of it stays in the tree, and the window completes. */
static void test_stream_file_never_matching_fails_the_capture(void **state)
{
    char data[SIZE], listed[SIZE], sum[32], got[32], reason[512], part[1024], file[1024];
    int64_t have;
    bool done;
    pattern(data, 2);
    pattern(listed, 3);
    sum_of(listed, sum, sizeof(sum));
    sum_of(data, got, sizeof(got));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = stream_begin(r, sum, part, file);

    for (int k = 1; k < PD_REMOTE_MAX_MISMATCHES; k++) {
        send_file(s, data, sum, &have, &done);
        if (have != 0 || done) {
            fail_msg("transfer %d: have %lld, done %d; want 0 bytes held, not done", k,
                     (long long)have, done);
        }
        assert_false(fx_exists(part));
    }
    send_file(s, data, sum, &have, &done);
    assert_int_equal(have, SIZE); /* nothing more to send */
    assert_true(done);
    assert_false(fx_exists(part));
    assert_false(fx_exists(file));

    wait_done(r);
    pp_manifest_t man;
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 1);
    assert_string_equal(pp_status_name(man.captures[0].status), "failed");
    snprintf(reason, sizeof(reason),
             CAPDIR "/trace.json: checksum mismatch: received %s, expected %s (%d transfers)", got,
             sum, PD_REMOTE_MAX_MISMATCHES);
    assert_string_equal(man.captures[0].reason, reason);
    pp_record_free(&pp_desc_manifest, &man);
    assert_false(fx_exists(part));
    assert_false(fx_exists(file));

    nng_close(s);
    fx_daemon_free(r);
}

/* A chunk ahead of the bytes the file holds, with none being written, is
 * not written: the answer is what the file holds (its first 1000 bytes,
 * all that is in the .part), and how many chunks of a file the coordinator
 * holds behind a write. The rest sent from there lands, its checksum the
 * one of the whole file. */
static void test_stream_chunk_ahead_is_answered_with_the_prefix(void **state)
{
    char data[SIZE], sum[32], part[1024], file[1024];
    int64_t have[1], off[1] = {2 * CHUNK};
    bool done[1];
    struct stat st;
    pattern(data, 4);
    sum_of(data, sum, sizeof(sum));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = stream_begin(r, sum, part, file);

    chunk(s, data, 0, CHUNK, sum, &have[0], &done[0]);
    assert_int_equal(have[0], CHUNK);
    chunks_at_once(r, data, off, 1, sum, have, done); /* the last chunk, before the second */
    assert_int_equal(have[0], CHUNK);
    assert_false(done[0]);
    assert_int_equal(stat(part, &st), 0);
    assert_int_equal(st.st_size, CHUNK); /* only the file's first bytes */
    chunk(s, data, CHUNK, CHUNK, sum, &have[0], &done[0]);
    assert_int_equal(have[0], 2 * CHUNK);
    chunk(s, data, 2 * CHUNK, CHUNK, sum, &have[0], &done[0]);
    assert_int_equal(have[0], SIZE);
    assert_true(done[0]);

    wait_done(r);
    assert_file(file, data);
    assert_manifest_sum(r, sum);
    nng_close(s);
    fx_daemon_free(r);
}

/* A node's loop: the file's chunks sent all at once, the last first, then
 * in order from the most the coordinator said it holds, until it says
 * done. Whatever order they arrive in, the
 * file lands whole, byte for byte, with its checksum; nothing stays
 * parked. */
static void test_stream_chunks_in_flight_land_in_order(void **state)
{
    char data[SIZE], sum[32], part[1024], file[1024];
    int64_t have[3], off[3] = {2 * CHUNK, CHUNK, 0};
    bool done[3], all = false;
    pattern(data, 5);
    sum_of(data, sum, sizeof(sum));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = stream_begin(r, sum, part, file);

    for (int round = 0; round < 10 && !all; round++) {
        int n = 0;
        int64_t from = 0;
        for (int i = 0; round && i < 3; i++) {
            from = have[i] > from ? have[i] : from; /* the node goes on from the most */
        }
        for (int64_t o = from; o < SIZE; o += CHUNK) { /* then in order */
            off[n++] = round ? o : SIZE - CHUNK - o;
        }
        for (int i = 0; i < 3; i++) {
            have[i] = 0;
        }
        chunks_at_once(r, data, off, n, sum, have, done);
        for (int i = 0; i < n; i++) {
            all = all || done[i];
            if (done[i]) {
                assert_int_equal(have[i], SIZE);
            }
        }
    }
    assert_true(all);
    wait_done(r);
    assert_false(fx_exists(part));
    assert_file(file, data);
    assert_manifest_sum(r, sum);
    assert_int_equal(pd_coord_parked(r->d.coord), 0);
    nng_close(s);
    fx_daemon_free(r);
}

/* The coordinator restarts with a file half received: the chunk that
 * follows what the node last heard is answered with the .part's size (the
 * bytes written in order before the restart), the rest sent from there
 * lands, and its hash (made again from the .part) is the whole file's. */
static void test_stream_restart_resumes_from_the_prefix(void **state)
{
    char data[SIZE], sum[32], part[1024], file[1024];
    int64_t have;
    bool done;
    pattern(data, 6);
    sum_of(data, sum, sizeof(sum));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = stream_begin(r, sum, part, file);
    chunk(s, data, 0, CHUNK, sum, &have, &done);
    assert_int_equal(have, CHUNK);
    nng_close(s);
    fx_daemon_stop(r);

    fx_daemon_start(r);
    s = node_join(r);
    chunk(s, data, 2 * CHUNK, CHUNK, sum, &have, &done); /* ahead: what it holds */
    assert_int_equal(have, CHUNK);
    assert_false(done);
    chunk(s, data, CHUNK, CHUNK, sum, &have, &done);
    assert_int_equal(have, 2 * CHUNK);
    chunk(s, data, 2 * CHUNK, CHUNK, sum, &have, &done);
    assert_int_equal(have, SIZE);
    assert_true(done);
    wait_done(r);
    assert_file(file, data);
    assert_manifest_sum(r, sum);
    nng_close(s);
    fx_daemon_free(r);
}

/* Two files of one capture: the first lands, the coordinator restarts,
 * the second lands after it. The manifest lists both checksums: the
 * first one's is read back from its incoming file's record (the member's
 * record is not written again for each file). */
static void test_stream_checksum_kept_over_a_restart(void **state)
{
    char a[SIZE], b[SIZE], suma[32], sumb[32], q[1024];
    int64_t have;
    bool done;
    pp_msg_t rep;
    pattern(a, 7);
    pattern(b, 8);
    sum_of(a, suma, sizeof(suma));
    sum_of(b, sumb, sizeof(sumb));
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = node_join(r);
    start_window(r);
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"node_result\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE
             "\",\"window\":1,\"client\":7,\"captures\":[{\"role\":\"e2e\",\"rank\":0,"
             "\"host\":\"host1\",\"pid\":4242,\"first_step\":5,\"last_step\":5,"
             "\"status\":\"complete\",\"dir\":\"" CAPDIR "\",\"files\":[{\"path\":\"trace.json\","
             "\"bytes\":%d},{\"path\":\"two.json\",\"bytes\":%d}]}]}",
             SIZE, SIZE);
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_ack);
    pp_msg_free(&rep);
    send_file(s, a, suma, &have, &done);
    assert_true(done);
    nng_close(s);
    fx_daemon_stop(r);

    fx_daemon_start(r);
    s = node_join(r);
    for (int64_t off = 0; off < SIZE; off += CHUNK) {
        chunk_of(s, "two.json", b, off, CHUNK, off + CHUNK == SIZE ? sumb : NULL, &have, &done);
        assert_int_equal(have, off + CHUNK);
    }
    wait_done(r);
    pp_manifest_t man;
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 1);
    assert_string_equal(pp_status_name(man.captures[0].status), "complete");
    assert_int_equal(man.captures[0].files_n, 2);
    assert_string_equal(man.captures[0].files[0].path, "trace.json");
    assert_non_null(man.captures[0].files[0].checksum);
    assert_string_equal(man.captures[0].files[0].checksum, suma);
    assert_string_equal(man.captures[0].files[1].path, "two.json");
    assert_string_equal(man.captures[0].files[1].checksum, sumb);
    pp_record_free(&pp_desc_manifest, &man);
    nng_close(s);
    fx_daemon_free(r);
}

/* What one node asks, as node `i`: its summary (no ranks). */
static int node_says(nng_socket s, const char *type, int i, pp_msg_t *rep)
{
    char q[256];
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"%s\",\"node\":\"n%02d\",\"instance\":\"" INSTANCE "\"}", type, i);
    return fx_ask(s, q, rep);
}

/* The coordinator finds a node by its name among many (its index grows
 * from 16 buckets as they join, and drops those that leave): 40 nodes
 * join, every third says goodbye, then each is known or not, and one that
 * left joins again. */
static void test_stream_many_nodes_found_by_name(void **state)
{
    pp_msg_t rep;
    fx_daemon_t *r = fx_coordinator_start(tmp);
    nng_socket s = fx_dial(r->cfg.coordinator_listen);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(node_says(s, "node_hello", i, &rep), 0);
        assert_int_equal(rep.type, PP_T_node_welcome);
        pp_msg_free(&rep);
    }
    for (int i = 0; i < 40; i += 3) {
        assert_int_equal(node_says(s, "node_bye", i, &rep), 0);
        assert_int_equal(rep.type, PP_T_ack);
        pp_msg_free(&rep);
    }
    for (int i = 0; i < 40; i++) {
        int rv = node_says(s, "node_summary", i, &rep);
        if (i % 3 == 0) {
            assert_int_equal(rv, PROFD_ECLIENT);
            char want[64];
            snprintf(want, sizeof(want), "unknown node n%02d: register again", i);
            assert_string_equal(rep.u.error.message, want);
        } else {
            assert_int_equal(rv, 0);
            assert_int_equal(rep.type, PP_T_ack);
        }
        pp_msg_free(&rep);
    }
    assert_int_equal(node_says(s, "node_hello", 3, &rep), 0);
    assert_int_equal(rep.type, PP_T_node_welcome);
    pp_msg_free(&rep);
    assert_int_equal(node_says(s, "node_summary", 3, &rep), 0);
    assert_int_equal(rep.type, PP_T_ack);
    pp_msg_free(&rep);
    nng_close(s);
    fx_daemon_free(r);
}

/* A batch of a node's results (node_results), as a node sends them to a
 * coordinator whose node_welcome said `batches`: rank 0's capture with its
 * file, a client the node never registered, rank 0's result sent again
 * (another folder: the first stands) and rank 1's failed capture. Each
 * item's outcome comes back in order; the manifest lists exactly the two
 * good captures. The whole batch sent again once the window is done (its
 * reply lost) gets the same outcomes. */
#define BATCH                                                                                      \
    "{\"v\":1,\"type\":\"node_results\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE            \
    "\",\"items\":[{\"window\":1,\"client\":7,\"captures\":[{\"role\":\"e2e\",\"rank\":0,"         \
    "\"host\":\"host1\",\"pid\":4242,\"first_step\":5,\"last_step\":5,\"status\":\"complete\","    \
    "\"dir\":\"" CAPDIR "\",\"files\":[{\"path\":\"trace.json\",\"bytes\":%d,\"checksum\":"        \
    "\"%s\"}]}]},{\"window\":1,\"client\":99,\"captures\":[]},{\"window\":1,\"client\":7,"         \
    "\"captures\":[{\"role\":\"e2e\",\"rank\":0,\"host\":\"host1\",\"pid\":4242,\"first_step\":5," \
    "\"last_step\":5,\"status\":\"complete\",\"dir\":\"e2e/elsewhere\",\"files\":[]}]},"           \
    "{\"window\":1,\"client\":8,\"captures\":[{\"role\":\"e2e\",\"rank\":1,\"host\":\"host1\","    \
    "\"pid\":4243,\"first_step\":5,\"last_step\":5,\"status\":\"failed\",\"reason\":\"the tool "   \
    "crashed\",\"files\":[]}]}]}"

static void assert_batch_outcomes(nng_socket s, const char *sum)
{
    char q[2048];
    pp_msg_t rep;
    snprintf(q, sizeof(q), BATCH, SIZE, sum);
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_node_results_reply);
    const pp_node_results_reply_t *a = &rep.u.node_results_reply;
    assert_int_equal(a->codes_n, 4);
    assert_int_equal(a->messages_n, 4);
    assert_int_equal(a->codes[0], 0);
    assert_int_equal(a->codes[1], PROFD_ENOENT);
    assert_int_equal(a->codes[2], 0);
    assert_int_equal(a->codes[3], 0);
    assert_string_equal(a->messages[0], "");
    assert_string_equal(a->messages[1], "node " NODE " has no client 99");
    assert_string_equal(a->messages[2], "");
    assert_string_equal(a->messages[3], "");
    pp_msg_free(&rep);
}

/* A coordinator that node NODE joined with ranks 0 and 1 of job j
 * (clients 7 and 8), its welcome saying it takes batches of results or
 * (files) of files, and window w1-step5 of both started; *s the node's
 * socket. */
static fx_daemon_t *batch_coordinator(nng_socket *s, bool files)
{
    pp_msg_t rep;
    fx_daemon_t *r = fx_coordinator_start(tmp);
    *s = fx_dial(r->cfg.coordinator_listen);
    assert_int_equal(
        fx_ask(*s,
               "{\"v\":1,\"type\":\"node_hello\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE
               "\",\"ranks\":[{\"client\":7,\"job\":\"j\",\"role\":\"actor\",\"rank\":0,"
               "\"host\":\"host1\",\"pid\":4242},{\"client\":8,\"job\":\"j\",\"role\":\"actor\","
               "\"rank\":1,\"host\":\"host1\",\"pid\":4243}]}",
               &rep),
        0);
    assert_int_equal(rep.type, PP_T_node_welcome);
    assert_true(files ? rep.u.node_welcome.files : rep.u.node_welcome.batches);
    pp_msg_free(&rep);
    fx_start_window(r->cfg.control_url,
                    "{\"v\":1,\"type\":\"start\",\"job\":\"j\",\"steps\":[5],\"tool\":\"sim\"}",
                    "w1-step5", 2);
    return r;
}

static void test_stream_results_in_a_batch(void **state)
{
    char data[SIZE], sum[64], file[1024];
    int64_t have;
    bool done;
    pp_manifest_t man;
    nng_socket s;
    fx_daemon_t *r = batch_coordinator(&s, false);
    pattern(data, 3);
    sum_of(data, sum, sizeof(sum));
    assert_batch_outcomes(s, sum);
    send_file(s, data, sum, &have, &done);
    assert_true(done);
    assert_int_equal(have, SIZE);
    wait_done(r);
    fx_path_of(file, sizeof(file), "%s/j/w1-step5/" CAPDIR "/trace.json", r->cfg.save_path);
    assert_file(file, data);
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 2);
    assert_int_equal(man.captures[0].rank, 0);
    assert_string_equal(pp_status_name(man.captures[0].status), "complete");
    assert_string_equal(man.captures[0].dir, CAPDIR);
    assert_int_equal(man.captures[0].files_n, 1);
    assert_string_equal(man.captures[0].files[0].path, "trace.json");
    assert_string_equal(man.captures[0].files[0].checksum, sum);
    assert_int_equal(man.captures[1].rank, 1);
    assert_string_equal(pp_status_name(man.captures[1].status), "failed");
    assert_string_equal(man.captures[1].reason, "the tool crashed");
    assert_null(man.captures[1].dir);
    pp_record_free(&pp_desc_manifest, &man);
    assert_batch_outcomes(s, sum); /* the reply was lost: sent again */
    nng_close(s);
    fx_daemon_free(r);
}

/* Whole small files several a request (chunks, issue 30), as a node sends
 * them to a coordinator whose node_welcome said `files`: rank 0's a.json
 * whole, a file the window does not expect (PROFD_ENOENT), rank 1's
 * c.json with half its bytes (PROFD_EINVAL: not the whole file), rank 0's
 * b.json with a wrong checksum (PROFD_EIO, sent again); then a.json sent
 * again (0: it has it), c.json and b.json whole: the window completes with
 * the three files, and the second request sent again once the window is
 * done (its reply lost) gets 0 for each file, the unexpected one still
 * PROFD_ENOENT. */
typedef struct bfile {
    const char *path; /* below the window folder */
    const char *data;
    int64_t len, size;
    const char *sum;
} bfile_t;

static void files_batch(nng_socket s, const bfile_t *f, int n, const int *codes,
                        const char *const *messages)
{
    pp_chunk_item_t items[8];
    char payload[SIZE], *buf;
    size_t off = 0, blen;
    pp_msg_t m, rep;
    for (int i = 0; i < n; i++) {
        items[i] = (pp_chunk_item_t){.window = 1,
                                     .path = (char *)f[i].path,
                                     .len = f[i].len,
                                     .size = f[i].size,
                                     .checksum = (char *)f[i].sum};
        memcpy(payload + off, f[i].data, (size_t)f[i].len);
        off += (size_t)f[i].len;
    }
    pp_msg_init(&m, PP_T_chunks);
    m.u.chunks.node = NODE;
    m.u.chunks.items = items;
    m.u.chunks.items_n = (size_t)n;
    assert_int_equal(pp_frame_encode(&m, payload, off, &buf, &blen), 0);
    int rv = fx_ask_raw(s, buf, blen, &rep);
    free(buf);
    if (rv != 0) {
        fail_msg("chunks refused: %s", rep.u.error.message);
    }
    assert_int_equal(rep.type, PP_T_chunks_reply);
    assert_int_equal(rep.u.chunks_reply.codes_n, n);
    assert_int_equal(rep.u.chunks_reply.busy_ms, 0);
    assert_int_equal(rep.u.chunks_reply.messages_n, n);
    for (int i = 0; i < n; i++) {
        if (rep.u.chunks_reply.codes[i] != codes[i]) {
            fail_msg("%s: %lld (%s), not %d", f[i].path, (long long)rep.u.chunks_reply.codes[i],
                     rep.u.chunks_reply.messages[i], codes[i]);
        }
        assert_string_equal(rep.u.chunks_reply.messages[i], messages[i]);
    }
    pp_msg_free(&rep);
}

static void assert_small_file(const fx_daemon_t *r, const char *path, const char *data, size_t len)
{
    char file[1024], got[SIZE + 1];
    struct stat st;
    fx_path_of(file, sizeof(file), "%s/j/w1-step5/%s", r->cfg.save_path, path);
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof(got), f), len);
    fclose(f);
    assert_memory_equal(got, data, len);
    fx_path_of(file, sizeof(file), "%s/j/w1-step5/%s.part", r->cfg.save_path, path);
    assert_int_equal(stat(file, &st), -1);
}

static void test_stream_files_in_a_batch(void **state)
{
    char data[SIZE], sa[32], sb[32], sc[32], q[2048], mismatch[128];
    pp_msg_t rep;
    pp_manifest_t man;
    nng_socket s;
    fx_daemon_t *r = batch_coordinator(&s, true);
    pattern(data, 5);
    snprintf(sa, sizeof(sa), "xxh64:%016llx", (unsigned long long)XXH64(data, 100, 0));
    snprintf(sb, sizeof(sb), "xxh64:%016llx", (unsigned long long)XXH64(data + 100, 40, 0));
    snprintf(sc, sizeof(sc), "xxh64:%016llx", (unsigned long long)XXH64(data + 140, 60, 0));
    snprintf(
        q, sizeof(q),
        "{\"v\":1,\"type\":\"node_results\",\"node\":\"" NODE "\",\"instance\":\"" INSTANCE
        "\",\"items\":[{\"window\":1,\"client\":7,\"captures\":[{\"role\":\"e2e\",\"rank\":0,"
        "\"host\":\"host1\",\"pid\":4242,\"first_step\":5,\"last_step\":5,\"status\":"
        "\"complete\",\"dir\":\"e2e/rank0-host1\",\"files\":[{\"path\":\"a.json\",\"bytes\":100,"
        "\"checksum\":\"%s\"},{\"path\":\"b.json\",\"bytes\":40,\"checksum\":\"%s\"}]}]},"
        "{\"window\":1,\"client\":8,\"captures\":[{\"role\":\"e2e\",\"rank\":1,\"host\":"
        "\"host1\",\"pid\":4243,\"first_step\":5,\"last_step\":5,\"status\":\"complete\","
        "\"dir\":\"e2e/rank1-host1\",\"files\":[{\"path\":\"c.json\",\"bytes\":60,\"checksum\":"
        "\"%s\"}]}]}]}",
        sa, sb, sc);
    assert_int_equal(fx_ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_node_results_reply);
    assert_int_equal(rep.u.node_results_reply.codes_n, 2);
    assert_int_equal(rep.u.node_results_reply.codes[0], 0);
    assert_int_equal(rep.u.node_results_reply.codes[1], 0);
    pp_msg_free(&rep);

    const char *zero = "xxh64:0000000000000000";
    bfile_t first[] = {
        {"e2e/rank0-host1/a.json", data, 100, 100, sa},
        {"e2e/rank0-host1/nope.json", data, 10, 10, sa},
        {"e2e/rank1-host1/c.json", data + 140, 30, 60, sc},
        {"e2e/rank0-host1/b.json", data + 100, 40, 40, zero},
    };
    snprintf(mismatch, sizeof(mismatch), "checksum mismatch: received %s, expected %s", sb, zero);
    const int codes1[] = {0, PROFD_ENOENT, PROFD_EINVAL, PROFD_EIO};
    const char *msgs1[] = {"",
                           "window w1-step5 expects no file e2e/rank0-host1/nope.json from " NODE,
                           "e2e/rank1-host1/c.json is not the whole file of 60 bytes", mismatch};
    files_batch(s, first, 4, codes1, msgs1);
    assert_small_file(r, "e2e/rank0-host1/a.json", data, 100);

    bfile_t second[] = {
        {"e2e/rank0-host1/a.json", data, 100, 100, sa},
        {"e2e/rank1-host1/c.json", data + 140, 60, 60, sc},
        {"e2e/rank0-host1/b.json", data + 100, 40, 40, sb},
        {"e2e/rank0-host1/nope.json", data, 10, 10, sa},
    };
    const int codes2[] = {0, 0, 0, PROFD_ENOENT};
    const char *msgs2[] = {"", "", "", msgs1[1]};
    files_batch(s, second, 4, codes2, msgs2);
    wait_done(r);
    assert_small_file(r, "e2e/rank0-host1/b.json", data + 100, 40);
    assert_small_file(r, "e2e/rank1-host1/c.json", data + 140, 60);
    read_manifest(r, &man);
    assert_int_equal(man.captures_n, 2);
    assert_string_equal(pp_status_name(man.captures[0].status), "complete");
    assert_int_equal(man.captures[0].files_n, 2);
    assert_string_equal(man.captures[0].files[0].checksum, sa);
    assert_string_equal(man.captures[0].files[1].checksum, sb);
    assert_string_equal(pp_status_name(man.captures[1].status), "complete");
    assert_int_equal(man.captures[1].files_n, 1);
    assert_string_equal(man.captures[1].files[0].checksum, sc);
    pp_record_free(&pp_desc_manifest, &man);
    files_batch(s, second, 4, codes2, msgs2); /* the reply was lost: sent again */
    nng_close(s);
    fx_daemon_free(r);
}

/* Which batches a coordinator takes now (pd_remote_batch_admit): any
 * with none being written, else within 1,024 files and 4 MiB in all. */
static void test_stream_batch_admit_by_table(void **state)
{
    (void)state;
    const struct {
        int64_t held_files, held_bytes, files, bytes;
        bool take;
    } t[] = {
        {0, 0, 64, 256 << 10, true},
        {0, 0, 256, 64 << 20, true}, /* one batch over the limits: taken alone */
        {960, 3 << 20, 64, 1 << 20, true},
        {961, 0, 64, 4096, false},
        {64, (4 << 20) - 4095, 1, 4096, false},
        {64, (4 << 20) - 4096, 1, 4096, true},
        {1024, 4 << 20, 1, 0, false},
    };
    assert_int_equal(PD_REMOTE_BATCH_FILES, 1024);
    assert_int_equal(PD_REMOTE_BATCH_BYTES, 4 << 20);
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (pd_remote_batch_admit(t[i].held_files, t[i].held_bytes, t[i].files, t[i].bytes) !=
            t[i].take) {
            fail_msg("row %zu: %s", i, t[i].take ? "refused" : "taken");
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_batch_admit_by_table),
        cmocka_unit_test_setup_teardown(test_stream_corrupt_chunk_is_sent_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_file_never_matching_fails_the_capture, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stream_chunk_ahead_is_answered_with_the_prefix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stream_chunks_in_flight_land_in_order, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stream_restart_resumes_from_the_prefix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stream_checksum_kept_over_a_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_many_nodes_found_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_results_in_a_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_files_in_a_batch, setup, teardown),
    };
    return PD_RUN_TESTS(tests, NULL, NULL);
}
