// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Gathering and confined paths, synchronously (no daemon): plain relative
 * paths, symlinks never followed when opening, removing or pruning, a fifo
 * that does not block, manifests and streamed files refused through a
 * symlinked folder, streamed files verified by their checksum, checksum
 * none reading nothing, and races: a spool folder or the capture folder
 * swapped for a symlink while gathering runs, and a capture's subfolder
 * swapped while it is copied, each swap made by the gathering's hook at the
 * point it races with, in every round. Nothing from outside may reach the
 * save tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "confine.h"
#include "gather.h"
#include "pd_skip.h"
#include "text.h"
#include "profd/errors.h"
#include "unit_fixture.h"

#define SECRET      "TOP-SECRET-outside-the-spool"
#define RACE_ROUNDS 20

static char tmp[256];

static void pathf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < len);
}

static void mkdirs(const char *path)
{
    assert_int_equal(pd_mkdirs(path, 0755), 0);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void rm_rf(const char *path)
{
    assert_int_equal(pd_tmp_remove(path), 0);
}

/* No file below `dir` holds SECRET, and nothing there is a symlink. */
static void assert_clean(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    if (d == NULL) {
        return;
    }
    while ((de = readdir(d)) != NULL) {
        char p[1024];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
            continue;
        }
        pathf(p, sizeof(p), "%s/%s", dir, de->d_name);
        assert_int_equal(lstat(p, &st), 0);
        if (S_ISLNK(st.st_mode)) {
            fail_msg("%s is a symlink in the save tree", p);
        } else if (S_ISDIR(st.st_mode)) {
            assert_clean(p);
        } else {
            char *text = slurp(p);
            if (text && strstr(text, SECRET)) {
                fail_msg("%s holds a file from outside the spool", p);
            }
            free(text);
        }
    }
    closedir(d);
}

static int setup(void **state)
{
    assert_non_null(pd_tmp_make(tmp, sizeof(tmp), "profd-gather"));
    return 0;
}

static int teardown(void **state)
{
    char p[300];
    snprintf(p, sizeof(p), "%s/fs", tmp);
    umount2(p, MNT_DETACH);
    rm_rf(tmp);
    return 0;
}

/* A tmpfs (mount options `opts`) on <tmp>/fs, its path in fs: another file
 * system for the save tree. Skips the test where it cannot (not root). */
static void mount_fs(char *fs, size_t len, const char *opts)
{
    pathf(fs, len, "%s/fs", tmp);
    mkdirs(fs);
    if (mount("tmpfs", fs, "tmpfs", 0, opts) != 0) {
        pd_skip("cannot mount a tmpfs (%s): needs root", strerror(errno));
    }
}

/* The capture folder <tmp>/spool/j/w1/e2e/r0 in cap, made with a folder
 * sub in it. */
static void capture_with_sub(char *cap, size_t len)
{
    char p[600];
    pathf(cap, len, "%s/spool/j/w1/e2e/r0", tmp);
    pathf(p, sizeof(p), "%s/sub", cap);
    mkdirs(p);
}

/* <tmp>/<rel> made, with its parents. */
static void tmp_mkdirs(const char *rel)
{
    char p[600];
    pathf(p, sizeof(p), "%s/%s", tmp, rel);
    mkdirs(p);
}

/* <tmp>/<rel> written with `text`. */
static void tmp_put(const char *rel, const char *text)
{
    char p[600];
    pathf(p, sizeof(p), "%s/%s", tmp, rel);
    put(p, text);
}

/* ---- confine ---- */

static void test_gather_rel_ok(void **state)
{
    static const struct {
        const char *rel;
        bool ok;
    } t[] = {
        {"a", true},      {"a/b/c", true}, {"a.b/..c", true}, {"", false},   {"/a", false},
        {"a/", false},    {"a//b", false}, {".", false},      {"..", false}, {"a/../b", false},
        {"a/./b", false}, {"../a", false}, {"a/..", false},   {"...", true},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (pd_confine_rel_ok(t[i].rel) != t[i].ok) {
            fail_msg("'%s': expected %s", t[i].rel, t[i].ok ? "ok" : "refused");
        }
    }
}

static void test_gather_quote(void **state)
{
    char out[64];
    pd_quote(out, sizeof(out), "a/b-c.d");
    assert_string_equal(out, "a/b-c.d");
    pd_quote(out, sizeof(out), "x\ny\x1b\\\xff");
    assert_string_equal(out, "x\\x0ay\\x1b\\x5c\\xff");
    pd_quote(out, 6, "abcdefgh"); /* cut, never overflowed */
    assert_string_equal(out, "abcde");
    pd_quote(out, 6, "ab\ncdef");
    assert_string_equal(out, "ab");
    /* text for a reply (issue 28): valid UTF-8 kept, invalid bytes quoted
     * (a lone continuation, a cut sequence, an overlong '/', a surrogate,
     * past U+10FFFF), controls but tab and newline quoted, never cut inside
     * a character */
    pd_text_utf8(out, sizeof(out), "r\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\t\\");
    assert_string_equal(out, "r\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\t\\");
    pd_text_utf8(out, sizeof(out), "\x80\xc3(\xc0\xaf");
    assert_string_equal(out, "\\x80\\xc3(\\xc0\\xaf");
    pd_text_utf8(out, sizeof(out), "\xed\xa0\x80\xf4\x90\x80\x80\n\x1b");
    assert_string_equal(out, "\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\n\\x1b");
    pd_text_utf8(out, 4, "a\xe2\x82\xac"); /* the euro sign does not fit whole */
    assert_string_equal(out, "a");
}

static void test_gather_confine_symlinks(void **state)
{
    char p[512], q[512], why[256];
    int root, fd;
    struct stat st;
    const char *base;
    tmp_mkdirs("root/a/b");
    pathf(p, sizeof(p), "%s/out", tmp);
    mkdirs(p);
    tmp_put("out/secret", SECRET);
    pathf(q, sizeof(q), "%s/root/a/link", tmp);
    assert_int_equal(symlink(p, q), 0); /* a/link -> out */
    tmp_put("root/a/b/file", "inside");
    pathf(q, sizeof(q), "%s/root/a/b/flink", tmp);
    pathf(p, sizeof(p), "%s/out/secret", tmp);
    assert_int_equal(symlink(p, q), 0);
    pathf(q, sizeof(q), "%s/root/a/b/fifo", tmp);
    assert_int_equal(mkfifo(q, 0644), 0);

    pathf(p, sizeof(p), "%s/root", tmp);
    assert_int_equal(pd_confine_root(p, &root, why, sizeof(why)), 0);
    assert_int_equal(pd_confine_dir(root, "a/b", false, &fd, why, sizeof(why)), 0);
    close(fd);
    assert_int_equal(pd_confine_dir(root, "a/link", false, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_string_equal(why, "'a/link' is a symlink (not followed)");
    assert_int_equal(pd_confine_dir(root, "a/link/x", true, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_string_equal(why, "'a/link' is a symlink (not followed)");
    pathf(p, sizeof(p), "%s/out/x", tmp);
    assert_false(exists(p)); /* not created through the symlink */
    assert_int_equal(pd_confine_dir(root, "a/b/file", false, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_string_equal(why, "'a/b/file' is not a folder");
    assert_int_equal(pd_confine_dir(root, "a/../a", false, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_string_equal(why, "'a/../a' is not a plain relative path");
    assert_int_equal(pd_confine_dir(root, "a/none", false, &fd, why, sizeof(why)), PROFD_EIO);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(pd_confine_dir(root, "a/new/deeper", true, &fd, why, sizeof(why)), 0);
    close(fd);

    assert_int_equal(pd_confine_open_file(root, "a/b/file", &fd, &st, why, sizeof(why)), 0);
    assert_int_equal(st.st_size, 6);
    close(fd);
    assert_int_equal(pd_confine_open_file(root, "a/b/flink", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'a/b/flink' is a symlink (not followed)");
    assert_int_equal(pd_confine_open_file(root, "a/link/secret", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    /* a fifo without a writer: refused at once, not a hang */
    assert_int_equal(pd_confine_open_file(root, "a/b/fifo", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'a/b/fifo' is not a regular file");
    assert_int_equal(pd_confine_parent(root, "a/b/file", false, &fd, &base, why, sizeof(why)), 0);
    assert_string_equal(base, "file");
    close(fd);

    /* removing and pruning never go through the symlink */
    assert_int_equal(pd_confine_remove(root, "a"), 0);
    pathf(p, sizeof(p), "%s/root/a", tmp);
    assert_false(exists(p));
    pathf(p, sizeof(p), "%s/out/secret", tmp);
    assert_true(exists(p));
    tmp_mkdirs("root/e1/e2");
    pathf(q, sizeof(q), "%s/root/e1/out", tmp);
    pathf(p, sizeof(p), "%s/out", tmp);
    assert_int_equal(symlink(p, q), 0);
    tmp_mkdirs("out/empty");
    assert_false(pd_confine_prune(root, "e1")); /* the symlink is not an empty folder */
    pathf(p, sizeof(p), "%s/root/e1/e2", tmp);
    assert_false(exists(p));
    pathf(p, sizeof(p), "%s/out/empty", tmp);
    assert_true(exists(p));
    close(root);
}

/* ---- gathering ---- */

static void job_init(pd_gather_job_t *j, const char *src, const char *dst)
{
    memset(j, 0, sizeof(*j));
    j->kind = PD_JOB_GATHER;
    pathf(j->spool, sizeof(j->spool), "%s/spool", tmp);
    pathf(j->root, sizeof(j->root), "%s/save", tmp);
    snprintf(j->src, sizeof(j->src), "%s", src);
    snprintf(j->dst, sizeof(j->dst), "%s", dst);
    j->checksum = true;
    j->owner = -1;
    j->budget = -1;
}

/* j: a gathering of j/w1/e2e/r0 into `root` (another file system). */
static void job_into(pd_gather_job_t *j, const char *root)
{
    job_init(j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    snprintf(j->root, sizeof(j->root), "%s", root);
}

static void job_reset(pd_gather_job_t *j)
{
    for (size_t i = 0; i < j->nfiles; i++) {
        pp_record_free(&pp_desc_file, &j->files[i]);
    }
    free(j->files);
    j->files = NULL;
    j->nfiles = j->files_cap = 0;
    j->bytes = 0;
}

static void test_gather_owner_and_links(void **state)
{
    char p[512], q[512];
    pd_gather_job_t j;
    tmp_mkdirs("spool/j/w1/e2e/r0");
    tmp_mkdirs("save");
    pathf(p, sizeof(p), "%s/spool/j/w1/e2e/r0/trace.json", tmp);
    put(p, "{}");

    /* the worker that reported is someone else */
    job_init(&j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    j.owner = (int64_t)getuid() + 1;
    pd_gather_run(&j);
    assert_int_equal(j.rv, PROFD_EPATH);
    pathf(q, sizeof(q),
          "capture folder 'j/w1/e2e/r0' belongs to uid %u, not to the worker that reported it "
          "(uid %u)",
          (unsigned)getuid(), (unsigned)getuid() + 1);
    assert_string_equal(j.reason, q);
    job_reset(&j);

    /* a second name of a file elsewhere */
    pathf(q, sizeof(q), "%s/spool/j/w1/e2e/r0/again", tmp);
    assert_int_equal(link(p, q), 0);
    job_init(&j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    pd_gather_run(&j);
    assert_int_equal(j.rv, PROFD_EPATH);
    assert_true(strcmp(j.reason, "'again' in the capture has 2 hard links") == 0 ||
                strcmp(j.reason, "'trace.json' in the capture has 2 hard links") == 0);
    job_reset(&j);
    unlink(q);

    /* paths that are not plain are refused before anything is opened */
    job_init(&j, "j/w1/../../../etc", "j/w1/e2e/r0");
    pd_gather_run(&j);
    assert_int_equal(j.rv, PROFD_EPATH);
    assert_string_equal(j.reason, "capture folder 'j/w1/../../../etc' is not a plain path in the "
                                  "spool");
    job_reset(&j);
    job_init(&j, "/etc", "j/w1/e2e/r0");
    pd_gather_run(&j);
    assert_int_equal(j.rv, PROFD_EPATH);
    job_reset(&j);
    job_init(&j, "j/w1/e2e/r0", "j/../../escape");
    pd_gather_run(&j);
    assert_int_equal(j.rv, PROFD_EPATH);
    assert_string_equal(j.reason, "save_path tree: 'j/../../escape' is not a plain relative path");
    job_reset(&j);

    /* and the good case: moved, not read again (no checksum) */
    job_init(&j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    j.owner = (int64_t)getuid();
    pd_gather_run(&j);
    assert_int_equal(j.rv, 0);
    assert_true(j.renamed);
    assert_int_equal(j.nfiles, 1);
    assert_string_equal(j.files[0].path, "trace.json");
    assert_true(j.files[0].moved);
    assert_null(j.files[0].checksum);
    pathf(p, sizeof(p), "%s/save/j/w1/e2e/r0/trace.json", tmp);
    assert_true(exists(p));
    job_reset(&j);
}

/* j: `len` bytes of data from `offset` of a file of `size` bytes streamed
 * to j/w1/e2e/r0/trace.json, whose checksum is `expect` ("": none). */
static void chunk_job(pd_chunk_job_t *j, const char *data, int64_t offset, size_t len, int64_t size,
                      const char *expect)
{
    memset(j, 0, sizeof(*j));
    j->kind = PD_JOB_CHUNK;
    pathf(j->root, sizeof(j->root), "%s/save", tmp);
    snprintf(j->dst, sizeof(j->dst), "j/w1/e2e/r0/trace.json");
    j->data = malloc(len);
    memcpy(j->data, data + offset, len);
    j->len = len;
    j->offset = offset;
    j->size = size;
    snprintf(j->expect, sizeof(j->expect), "%s", expect);
}

static void test_gather_write_and_chunk_refuse_symlinks(void **state)
{
    char p[512], q[512];
    tmp_mkdirs("save/j");
    pathf(q, sizeof(q), "%s/elsewhere", tmp);
    mkdirs(q);
    pathf(p, sizeof(p), "%s/save/j/w1", tmp);
    assert_int_equal(symlink(q, p), 0);

    {
        pd_write_job_t j;
        memset(&j, 0, sizeof(j));
        pathf(j.root, sizeof(j.root), "%s/save", tmp);
        snprintf(j.dst, sizeof(j.dst), "j/w1/manifest.json");
        j.data = strdup("{}");
        j.len = 2;
        pd_write_run(&j);
        assert_int_equal(j.rv, PROFD_EPATH);
        assert_string_equal(j.reason, "save_path tree: 'j/w1' is a symlink (not followed)");
        free(j.data);
    }

    {
        pd_chunk_job_t j;
        chunk_job(&j, "abc", 0, 3, 3, "");
        pd_chunk_run(&j);
        assert_int_equal(j.rv, PROFD_EPATH);
        assert_false(j.complete);
        free(j.data);
    }

    pathf(p, sizeof(p), "%s/elsewhere/manifest.json", tmp);
    assert_false(exists(p));
    pathf(p, sizeof(p), "%s/elsewhere/e2e", tmp);
    assert_false(exists(p));

    /* a streamed file that would go below the free-disk floor */
    {
        pd_chunk_job_t j;
        chunk_job(&j, "abc", 0, 3, 3, "");
        snprintf(j.dst, sizeof(j.dst), "j/w2/e2e/r0/trace.json");
        j.min_free = 1LL << 50;
        pd_chunk_run(&j);
        assert_int_equal(j.rv, PROFD_ELIMIT);
        assert_int_equal(j.have, 0);
        free(j.data);
    }
}

/* ---- streamed files ---- */

/* A streamed file is written as .part and renamed once the whole file
 * matches the checksum its node listed. A byte changed in flight: the last
 * chunk finds the mismatch, the .part goes and the coordinator holds 0
 * bytes (the node sends the file again from its start); sent again intact,
 * the file lands. */
static void test_gather_chunk_checksum(void **state)
{
    static const char data[] = "{\"traceEvents\":[{\"name\":\"step\",\"ph\":\"X\"}]}\n";
    const size_t size = sizeof(data) - 1, half = size / 2;
    char bad[sizeof(data)], want[32], got[32], reason[200], part[512], file[512];
    pd_chunk_job_t j;
    snprintf(want, sizeof(want), "xxh64:%016llx", (unsigned long long)XXH64(data, size, 0));
    memcpy(bad, data, sizeof(data));
    bad[size - 3] ^= 0x20; /* in the second chunk */
    snprintf(got, sizeof(got), "xxh64:%016llx", (unsigned long long)XXH64(bad, size, 0));
    pathf(part, sizeof(part), "%s/save/j/w1/e2e/r0/trace.json.part", tmp);
    pathf(file, sizeof(file), "%s/save/j/w1/e2e/r0/trace.json", tmp);
    tmp_mkdirs("save");

    chunk_job(&j, data, 0, half, (int64_t)size, want);
    pd_chunk_run(&j);
    assert_int_equal(j.rv, 0);
    assert_int_equal(j.have, (int64_t)half);
    assert_false(j.complete);
    assert_true(exists(part));
    free(j.data);

    chunk_job(&j, bad, (int64_t)half, size - half, (int64_t)size, want);
    pd_chunk_run(&j);
    assert_int_equal(j.rv, PROFD_EIO);
    snprintf(reason, sizeof(reason), "checksum mismatch: received %s, expected %s", got, want);
    assert_string_equal(j.reason, reason);
    assert_int_equal(j.have, 0);
    assert_false(j.complete);
    assert_false(exists(part));
    assert_false(exists(file));
    free(j.data);

    /* a chunk that does not start where the coordinator stands: resume at 0 */
    chunk_job(&j, data, (int64_t)half, size - half, (int64_t)size, want);
    pd_chunk_run(&j);
    assert_int_equal(j.have, 0);
    assert_false(j.complete);
    assert_false(exists(file));
    free(j.data);

    chunk_job(&j, data, 0, half, (int64_t)size, want);
    pd_chunk_run(&j);
    assert_int_equal(j.rv, 0);
    free(j.data);
    chunk_job(&j, data, (int64_t)half, size - half, (int64_t)size, want);
    pd_chunk_run(&j);
    assert_int_equal(j.rv, 0);
    assert_int_equal(j.have, (int64_t)size);
    assert_true(j.complete);
    assert_false(exists(part));
    char *text = slurp(file);
    assert_non_null(text);
    assert_string_equal(text, data);
    free(text);
    free(j.data);
}

/* ---- checksum: none ---- */

/* Empties the file named by hook_arg once the capture is listed. */
static void empty_hook(pd_gather_job_t *j, pd_job_at_t at)
{
    if (at == PD_JOB_AT_LISTED) {
        assert_int_equal(truncate(j->hook_arg, 0), 0);
    }
}

/* A capture gathered by rename is not read again, whatever the checksum
 * setting (a same-file-system gather is O(1) in bytes): the hook empties a
 * file once it is listed, nobody notices, the entry says it was moved,
 * with the size listed and no checksum. */
static void test_gather_checksum_none(void **state)
{
    static const char trace[] = "{\"traceEvents\":[]}\n";
    char cap[512], file[512], p[512];
    pd_gather_job_t j;
    pathf(cap, sizeof(cap), "%s/spool/j/w1/e2e/r0", tmp);
    mkdirs(cap);
    tmp_mkdirs("save");
    pathf(file, sizeof(file), "%s/trace.json", cap);
    put(file, trace);

    job_init(&j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    j.hook = empty_hook;
    j.hook_arg = file;
    pd_gather_run(&j);
    assert_int_equal(j.rv, 0);
    assert_string_equal(j.reason, "");
    assert_true(j.renamed);
    assert_int_equal(j.nfiles, 1);
    assert_string_equal(j.files[0].path, "trace.json");
    assert_int_equal(j.files[0].bytes, (int64_t)strlen(trace));
    assert_null(j.files[0].checksum);
    assert_true(j.files[0].moved);
    struct stat st;
    pathf(p, sizeof(p), "%s/save/j/w1/e2e/r0/trace.json", tmp);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 0); /* emptied after the listing, and nobody noticed */
    assert_false(exists(cap));
    job_reset(&j);
}

/* ---- races ---- */

/* A worker swaps a folder of its capture for a symlink while the capture is
 * gathered. The gathering's hook does the swap at the point named, between
 * a check and the use it guards, so that the race happens in every round
 * rather than now and then. */
typedef struct swap {
    pd_job_at_t at;
    char path[512];   /* swapped for a symlink */
    char real[512];   /* the real folder meanwhile */
    char target[512]; /* where the symlink points */
    int swaps;
} swap_t;

static void swap_hook(pd_gather_job_t *j, pd_job_at_t at)
{
    swap_t *s = j->hook_arg;
    if (at == s->at && rename(s->path, s->real) == 0 && symlink(s->target, s->path) == 0) {
        s->swaps++;
    }
}

/* As it was: the real folder in place, when it is still there. */
static void swap_undo(swap_t *s)
{
    if (exists(s->real)) {
        unlink(s->path);
        assert_int_equal(rename(s->real, s->path), 0);
    }
}

/* Round `round` of a race: j gathers j/w1/e2e/r0 (into root; NULL: the
 * default) while s swaps its folder at s->at, the swap undone after; it
 * swapped this round, and ended with want_rv and exactly want_reason. */
static void swap_run(pd_gather_job_t *j, swap_t *s, const char *root, int round, int want_rv,
                     const char *want_reason)
{
    if (root != NULL) {
        job_into(j, root);
    } else {
        job_init(j, "j/w1/e2e/r0", "j/w1/e2e/r0");
    }
    j->hook = swap_hook;
    j->hook_arg = s;
    pd_gather_run(j);
    swap_undo(s);
    if (s->swaps != round + 1) {
        fail_msg("round %d: %s was not swapped for a symlink", round, s->path);
    }
    if (j->rv != want_rv || strcmp(j->reason, want_reason) != 0) {
        fail_msg("round %d at %d: rv %d '%s', want %d '%s'", round, (int)s->at, j->rv, j->reason,
                 want_rv, want_reason);
    }
}

/* outside/w1/e2e/r0/trace.json holds SECRET: what a gathering that
 * follows spool/j -> outside would move or copy. */
static void race_fixture(const char *spool_cap, const char *outside)
{
    char p[512];
    pathf(p, sizeof(p), "%s/w1/e2e/r0", outside);
    mkdirs(p);
    pathf(p, sizeof(p), "%s/w1/e2e/r0/trace.json", outside);
    put(p, SECRET "\n");
    mkdirs(spool_cap);
    pathf(p, sizeof(p), "%s/trace.json", spool_cap);
    put(p, "{\"traceEvents\":[]}\n");
}

/* RACE_ROUNDS gatherings of spool/j/w1/e2e/r0, each with spool/<swap_rel>
 * swapped for a symlink to outside/<target_rel> at `at`. Each ends with
 * want_rv and exactly want_reason ("" when gathered: then the spool's
 * capture is in the save tree); outside stays as it was, and nothing from
 * outside and no symlink reaches the save tree. */
static void race(const char *swap_rel, const char *target_rel, pd_job_at_t at, int want_rv,
                 const char *want_reason)
{
    char outside[512], cap[512], save[512], p[512];
    swap_t s = {.at = at};
    pathf(outside, sizeof(outside), "%s/outside", tmp);
    pathf(cap, sizeof(cap), "%s/spool/j/w1/e2e/r0", tmp);
    pathf(save, sizeof(save), "%s/save", tmp);
    mkdirs(save);
    pathf(s.path, sizeof(s.path), "%s/spool/%s", tmp, swap_rel);
    pathf(s.real, sizeof(s.real), "%s/spool/%s.real", tmp, swap_rel);
    pathf(s.target, sizeof(s.target), "%s%s%s", outside, target_rel[0] ? "/" : "", target_rel);
    for (int round = 0; round < RACE_ROUNDS; round++) {
        pd_gather_job_t j;
        race_fixture(cap, outside);
        swap_run(&j, &s, NULL, round, want_rv, want_reason);
        if (want_rv == 0) {
            assert_true(j.renamed);
            pathf(p, sizeof(p), "%s/j/w1/e2e/r0/trace.json", save);
            char *text = slurp(p);
            assert_non_null(text);
            assert_string_equal(text, "{\"traceEvents\":[]}\n");
            free(text);
        }
        job_reset(&j);
        /* outside intact, the save tree clean */
        pathf(p, sizeof(p), "%s/w1/e2e/r0/trace.json", outside);
        char *text = slurp(p);
        if (text == NULL || strcmp(text, SECRET "\n") != 0) {
            fail_msg("round %d: the folder outside the spool was moved", round);
        }
        free(text);
        assert_clean(save);
        pathf(p, sizeof(p), "%s/j", save);
        rm_rf(p);
        rm_rf(cap);
    }
    assert_int_equal(s.swaps, RACE_ROUNDS);
}

/* A spool folder the worker owns is swapped for a symlink to a folder
 * outside: before the gathering opens the capture, it is refused; once
 * the capture is open, it is the spool's capture that moves. */
static void test_gather_race_spool_folder(void **state)
{
    race("j", "", PD_JOB_AT_OPEN, PROFD_EPATH, "spool: 'j' is a symlink (not followed)");
    race("j", "", PD_JOB_AT_LISTED, 0, "");
}

/* The capture folder itself is swapped for a symlink: before it is opened,
 * or once it is listed (then the rename would move the symlink). */
static void test_gather_race_capture_folder(void **state)
{
    race("j/w1/e2e/r0", "w1/e2e/r0", PD_JOB_AT_OPEN, PROFD_EPATH,
         "capture folder 'j/w1/e2e/r0' is a symlink (not followed)");
    race("j/w1/e2e/r0", "w1/e2e/r0", PD_JOB_AT_LISTED, PROFD_EPATH,
         "capture folder was replaced while it was gathered");
}

/* A subfolder of a capture is swapped for a symlink before the capture is
 * listed, while it is listed (its status said folder, it is not opened yet),
 * or once it is listed and is about to be copied to another file system
 * (root: the save tree on a tmpfs). */
static void test_gather_race_copy(void **state)
{
    static const struct {
        pd_job_at_t at;
        const char *reason;
    } cases[] = {
        {PD_JOB_AT_OPEN, "'sub' in the capture is a symlink (not followed)"},
        {PD_JOB_AT_FOLDER, "cannot open 'sub' in the capture: Not a directory"},
        {PD_JOB_AT_LISTED, "'sub' is a symlink (not followed)"},
    };
    char fs[512], cap[512], sub[512], outside[512], p[512];
    mount_fs(fs, sizeof(fs), "size=16m");
    pathf(outside, sizeof(outside), "%s/outside", tmp);
    mkdirs(outside);
    pathf(p, sizeof(p), "%s/trace.json", outside);
    put(p, SECRET "\n");
    pathf(cap, sizeof(cap), "%s/spool/j/w1/e2e/r0", tmp);
    pathf(sub, sizeof(sub), "%s/sub", cap);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        swap_t s = {.at = cases[c].at};
        snprintf(s.path, sizeof(s.path), "%s", sub);
        pathf(s.real, sizeof(s.real), "%s/sub.real", cap);
        snprintf(s.target, sizeof(s.target), "%s", outside);
        for (int round = 0; round < RACE_ROUNDS; round++) {
            pd_gather_job_t j;
            mkdirs(sub);
            pathf(p, sizeof(p), "%s/trace.json", sub);
            put(p, "{\"traceEvents\":[]}\n");
            swap_run(&j, &s, fs, round, PROFD_EPATH, cases[c].reason);
            assert_false(j.renamed);
            job_reset(&j);
            assert_clean(fs);
            pathf(p, sizeof(p), "%s/j/w1/e2e/r0", fs);
            assert_false(exists(p)); /* the partial copy is gone */
            pathf(p, sizeof(p), "%s/j", fs);
            rm_rf(p);
            rm_rf(cap);
        }
        assert_int_equal(s.swaps, RACE_ROUNDS);
    }
    assert_int_equal(umount2(fs, MNT_DETACH), 0);
}

/* Files written with a known pattern; their xxh64 as the manifest says it. */
static void write_pattern(const char *path, size_t size, unsigned seed, char *sum, size_t len)
{
    FILE *f = fopen(path, "wb");
    XXH64_state_t *st = XXH64_createState();
    unsigned char buf[4096];
    assert_non_null(f);
    assert_non_null(st);
    XXH64_reset(st, 0);
    for (size_t off = 0; off < size;) {
        size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
        for (size_t i = 0; i < n; i++) {
            buf[i] = (unsigned char)((off + i) * 2654435761u >> 13 ^ seed);
        }
        assert_int_equal(fwrite(buf, 1, n, f), n);
        XXH64_update(st, buf, n);
        off += n;
    }
    assert_int_equal(fclose(f), 0);
    snprintf(sum, len, "xxh64:%016llx", (unsigned long long)XXH64_digest(st));
    XXH64_freeState(st);
}

/* A copy to another file system (a tmpfs) checksums what it copies: small
 * files inline, large ones (8 MiB and more) on a second thread while the
 * copy goes on; the sums are those of the bytes, and so are the copies. */
static void test_gather_copy_checksums(void **state)
{
    static const struct {
        const char *name;
        size_t size;
    } files[] = {
        {"empty.json", 0},
        {"small.json", 1000},
        {"exact.bin", 8u << 20},           /* the threshold */
        {"big.bin", (9u << 20) + 12345},   /* an odd last buffer */
        {"sub/big2.bin", (17u << 20) + 1}, /* two buffers, many times */
    };
    char fs[512], cap[512], p[512], sums[5][32], got[32];
    mount_fs(fs, sizeof(fs), "size=80m");
    capture_with_sub(cap, sizeof(cap));
    for (size_t i = 0; i < 5; i++) {
        pathf(p, sizeof(p), "%s/%s", cap, files[i].name);
        write_pattern(p, files[i].size, (unsigned)i, sums[i], sizeof(sums[i]));
    }
    pd_gather_job_t j;
    job_into(&j, fs);
    pd_gather_run(&j);
    assert_int_equal(j.rv, 0);
    assert_false(j.renamed);
    assert_int_equal(j.nfiles, 5);
    for (size_t i = 0; i < 5; i++) {
        size_t k = 0;
        while (k < j.nfiles && strcmp(j.files[k].path, files[i].name) != 0) {
            k++;
        }
        assert_true(k < j.nfiles);
        assert_int_equal(j.files[k].bytes, (int64_t)files[i].size);
        assert_string_equal(j.files[k].checksum, sums[i]);
        /* the copy holds the same bytes */
        pathf(p, sizeof(p), "%s/j/w1/e2e/r0/%s", fs, files[i].name);
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        XXH64_state_t *st = XXH64_createState();
        XXH64_reset(st, 0);
        char buf[65536];
        size_t n, total = 0;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
            XXH64_update(st, buf, n);
            total += n;
        }
        fclose(f);
        snprintf(got, sizeof(got), "xxh64:%016llx", (unsigned long long)XXH64_digest(st));
        XXH64_freeState(st);
        assert_int_equal(total, files[i].size);
        assert_string_equal(got, sums[i]);
    }
    job_reset(&j);

    /* checksum: none: the same copy, and no checksum in any entry */
    pathf(p, sizeof(p), "%s/j", fs);
    rm_rf(p);
    pathf(p, sizeof(p), "%s/sub", cap);
    mkdirs(p);
    for (size_t i = 0; i < 5; i++) {
        pathf(p, sizeof(p), "%s/%s", cap, files[i].name);
        write_pattern(p, files[i].size, (unsigned)i, got, sizeof(got));
    }
    job_into(&j, fs);
    j.checksum = false;
    pd_gather_run(&j);
    assert_int_equal(j.rv, 0);
    assert_false(j.renamed);
    assert_int_equal(j.nfiles, 5);
    for (size_t k = 0; k < j.nfiles; k++) {
        struct stat st;
        assert_null(j.files[k].checksum);
        pathf(p, sizeof(p), "%s/j/w1/e2e/r0/%s", fs, j.files[k].path);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_size, j.files[k].bytes);
    }
    job_reset(&j);
    assert_int_equal(umount2(fs, MNT_DETACH), 0);
}

/* After a copy to another file system the spool copy goes aside into
 * .trash/w<window>/c<client>-<cap>, for PD_JOB_REMOVE after the manifest;
 * a .trash that is not the daemon's alone is not used: the copy goes at once. */
static void test_gather_copy_trash(void **state)
{
    char fs[512], cap[512], p[512], trash[512];
    struct stat st;
    mount_fs(fs, sizeof(fs), "size=16m");
    capture_with_sub(cap, sizeof(cap));
    pathf(p, sizeof(p), "%s/sub/trace.json", cap);
    put(p, "{\"traceEvents\":[]}\n");
    {
        pd_gather_job_t j;
        job_into(&j, fs);
        j.window = 7;
        j.client = 3;
        j.cap = 1;
        pd_gather_run(&j);
        assert_int_equal(j.rv, 0);
        assert_false(j.renamed);
        assert_true(j.trashed);
        assert_false(exists(cap));
        pathf(p, sizeof(p), "%s/spool/.trash/w7/c3-1/sub/trace.json", tmp);
        assert_true(exists(p));
        pathf(trash, sizeof(trash), "%s/spool/.trash", tmp);
        assert_int_equal(stat(trash, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        pathf(p, sizeof(p), "%s/j/w1/e2e/r0/sub/trace.json", fs);
        assert_true(exists(p));
        job_reset(&j);
    }

    /* the removal after the manifest; .trash goes with its last entry */
    {
        pd_remove_job_t j;
        memset(&j, 0, sizeof(j));
        pathf(j.spool, sizeof(j.spool), "%s/spool", tmp);
        snprintf(j.src, sizeof(j.src), ".trash/w7");
        pd_remove_run(&j);
        assert_int_equal(j.rv, 0);
        assert_false(exists(trash));
        pd_remove_run(&j); /* nothing left: not an error */
        assert_int_equal(j.rv, 0);
    }

    /* a .trash writable by others is not used */
    mkdirs(trash);
    assert_int_equal(chmod(trash, 0777), 0);
    mkdirs(cap);
    pathf(p, sizeof(p), "%s/trace.json", cap);
    put(p, "{}\n");
    pathf(p, sizeof(p), "%s/j", fs);
    rm_rf(p);
    {
        pd_gather_job_t j;
        job_into(&j, fs);
        pd_gather_run(&j);
        assert_int_equal(j.rv, 0);
        assert_false(j.trashed);
        assert_false(exists(cap));
        pathf(p, sizeof(p), "%s/w0", trash);
        assert_false(exists(p));
        job_reset(&j);
    }
    assert_int_equal(umount2(fs, MNT_DETACH), 0);
}

/* Whole files in one job (PD_JOB_CHUNKS, issue 30): two files in one
 * folder, one in the next capture's folder (one component from the folder
 * kept above it), one whose capture folder is a symlink (refused, nothing
 * made where it points) and one whose checksum does not match (no file,
 * no .part); each item's outcome is its own. */
static void test_gather_chunks_batch(void **state)
{
    static const char *dst[] = {"j/w1/e2e/r0/a", "j/w1/e2e/r0/b", "j/w1/e2e/r1/c", "j/w1/e2e/r2/d",
                                "j/w1/e2e/r3/e"};
    char p[512], q[512], sum[5][32], *got;
    int64_t hashed[5] = {0};
    pd_chunks_job_t b;
    memset(&b, 0, sizeof(b));
    b.kind = PD_JOB_CHUNKS;
    tmp_mkdirs("save/j/w1/e2e");
    tmp_mkdirs("elsewhere");
    pathf(p, sizeof(p), "%s/save/j/w1/e2e/r2", tmp);
    pathf(q, sizeof(q), "%s/elsewhere", tmp);
    assert_int_equal(symlink(q, p), 0);
    pathf(b.root, sizeof(b.root), "%s/save", tmp);
    b.data = strdup("aabbbcdddde");
    b.items = calloc(5, sizeof(*b.items));
    b.n = 5;
    const size_t off[] = {0, 2, 5, 6, 10}, len[] = {2, 3, 1, 4, 1};
    for (size_t i = 0; i < 5; i++) {
        pd_chunk_job_t *j = (pd_chunk_job_t *)pd_job_new(PD_JOB_CHUNK);
        b.items[i] = j;
        snprintf(j->dst, sizeof(j->dst), "%s", dst[i]);
        j->data = b.data + off[i];
        j->len = len[i];
        j->size = (int64_t)len[i];
        j->hash = XXH64_createState();
        XXH64_reset(j->hash, 0);
        j->hashed = &hashed[i];
        snprintf(sum[i], sizeof(sum[i]), "xxh64:%016llx",
                 (unsigned long long)XXH64(j->data, len[i], 0));
        snprintf(j->expect, sizeof(j->expect), "%s", i == 4 ? "xxh64:0000000000000000" : sum[i]);
    }
    pd_chunks_run(&b);
    const char *want[] = {"aa", "bbb", "c"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(b.items[i]->rv, 0);
        assert_true(b.items[i]->complete);
        assert_string_equal(b.items[i]->got, sum[i]);
        pathf(p, sizeof(p), "%s/save/%s", tmp, dst[i]);
        assert_string_equal(got = slurp(p), want[i]);
        free(got);
    }
    assert_int_equal(b.items[3]->rv, PROFD_EPATH);
    assert_string_equal(b.items[3]->reason,
                        "save_path tree: 'j/w1/e2e/r2' is a symlink (not followed)");
    assert_false(b.items[3]->complete);
    pathf(p, sizeof(p), "%s/elsewhere/d.part", tmp);
    assert_false(exists(p));
    assert_int_equal(b.items[4]->rv, PROFD_EIO);
    assert_true(b.items[4]->mismatch);
    pathf(p, sizeof(p), "%s/save/j/w1/e2e/r3/e", tmp);
    assert_false(exists(p));
    pathf(p, sizeof(p), "%s/save/j/w1/e2e/r3/e.part", tmp);
    assert_false(exists(p));
    for (size_t i = 0; i < 5; i++) {
        XXH64_freeState(b.items[i]->hash);
        b.items[i]->data = NULL;
        pd_job_free(PD_JOB(b.items[i]));
    }
    free(b.items);
    free(b.data);
}

int main(void)
{
    int plain = PD_RUN_EACH(NULL, NULL, test_gather_rel_ok, test_gather_quote);
    return unit_exit2(
        plain,
        PD_RUN_EACH(setup, teardown, test_gather_confine_symlinks, test_gather_owner_and_links,
                    test_gather_write_and_chunk_refuse_symlinks, test_gather_chunk_checksum,
                    test_gather_checksum_none, test_gather_race_spool_folder,
                    test_gather_race_capture_folder, test_gather_race_copy,
                    test_gather_copy_checksums, test_gather_copy_trash, test_gather_chunks_batch));
}
