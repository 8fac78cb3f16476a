// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A file below a root read whole, confined (pd_confine_read_file: a
 * window's manifest.json and steps.json read back): its bytes when every
 * folder on the way and the file are what they say, else one code each,
 * with the reason: gone (ENOENT), a symlink on the way, whichever
 * component it is, a fifo (refused at once, never waited on) or a folder
 * (EPATH), over the size bound (ELIMIT).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "job.h"
#include "profd/errors.h"
#include "unit_fixture.h"

typedef struct fx {
    unit_dir_t d;
    char root[128], other[160];
} fx_t;

/* `text` as the file base/rel, its folders made. */
static void put(const char *base, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", base, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    assert_int_equal(pd_mkdirs(p, 0755), 0);
    *slash = '/';
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
}

/* base/rel (moved to base/rel.real) replaced by a symlink to `target`. */
static void swap_link(const char *target, const char *base, const char *rel)
{
    char p[512], real[520];
    snprintf(p, sizeof(p), "%s/%s", base, rel);
    snprintf(real, sizeof(real), "%s.real", p);
    assert_int_equal(rename(p, real), 0);
    assert_int_equal(symlink(target, p), 0);
}

/* The root holds j/w/steps.json; `other`, outside it, j/w/steps.json of
 * the same bytes (what a read through a link would find). */
static int setup(void **state)
{
    unit_dir_setup(state, sizeof(fx_t), "profd-cread", "root");
    fx_t *f = *state;
    snprintf(f->root, sizeof(f->root), "%s", f->d.path);
    snprintf(f->other, sizeof(f->other), "%s.other", f->d.path);
    put(f->root, "j/w/steps.json", "{\"steps\":[1,2]}");
    put(f->other, "j/w/steps.json", "{\"steps\":[1,2]}");
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->other);
    assert_int_equal(system(cmd), 0);
    return unit_dir_teardown(state);
}

/* `rel` below the root read, at most `max` bytes: its code, `why` set */
#define READ(f, rel, max, why)                                                                     \
    pd_confine_read_file((f)->root, rel, max, &buf, &len, why, sizeof(why))

/* The bytes, NUL-terminated; a bound of exactly its size is enough; an
 * empty file is "" of 0 bytes. */
static void test_read_whole(void **state)
{
    fx_t *f = *state;
    char why[256], *buf;
    size_t len;
    assert_int_equal(READ(f, "j/w/steps.json", 15, why), 0);
    assert_int_equal(len, 15);
    assert_string_equal(buf, "{\"steps\":[1,2]}");
    free(buf);
    put(f->root, "j/w/empty", "");
    assert_int_equal(READ(f, "j/w/empty", 0, why), 0);
    assert_int_equal(len, 0);
    assert_string_equal(buf, "");
    free(buf);
}

/* One byte over the bound: ELIMIT, nothing allocated. */
static void test_read_limit(void **state)
{
    fx_t *f = *state;
    char why[256], *buf = (char *)"x";
    size_t len = 9;
    assert_int_equal(READ(f, "j/w/steps.json", 14, why), PROFD_ELIMIT);
    assert_string_equal(why, "'j/w/steps.json' is larger than 14 bytes");
    assert_null(buf);
    assert_int_equal(len, 0);
}

/* The file, its folder, the root gone: ENOENT each. */
static void test_read_gone(void **state)
{
    fx_t *f = *state;
    char why[256], *buf;
    size_t len;
    assert_int_equal(READ(f, "j/w/manifest.json", 1 << 20, why), PROFD_ENOENT);
    assert_string_equal(why, "cannot open 'j/w/manifest.json': No such file or directory");
    assert_int_equal(READ(f, "j/v/steps.json", 1 << 20, why), PROFD_ENOENT);
    assert_string_equal(why, "cannot open 'j/v': No such file or directory");
    assert_null(buf);
    assert_int_equal(
        pd_confine_read_file(f->other, "x/w/steps.json", 1 << 20, &buf, &len, why, sizeof(why)),
        PROFD_ENOENT);
    char none[200];
    snprintf(none, sizeof(none), "%s.none", f->root);
    assert_int_equal(
        pd_confine_read_file(none, "j/w/steps.json", 1 << 20, &buf, &len, why, sizeof(why)),
        PROFD_ENOENT);
}

/* The window's folder, the job's folder, the file itself a symlink to its
 * copy elsewhere: EPATH naming the link, never its bytes. */
static void test_read_symlinks(void **state)
{
    fx_t *f = *state;
    char why[256], target[256], *buf;
    size_t len;
    snprintf(target, sizeof(target), "%s/j/w", f->other);
    swap_link(target, f->root, "j/w");
    assert_int_equal(READ(f, "j/w/steps.json", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'j/w' is a symlink (not followed)");
    assert_null(buf);

    snprintf(target, sizeof(target), "%s/j", f->other);
    swap_link(target, f->root, "j");
    assert_int_equal(READ(f, "j/w/steps.json", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'j' is a symlink (not followed)");

    put(f->root, "k/w/steps.json", "{}");
    snprintf(target, sizeof(target), "%s/j/w/steps.json", f->other);
    swap_link(target, f->root, "k/w/steps.json");
    assert_int_equal(READ(f, "k/w/steps.json", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'k/w/steps.json' is a symlink (not followed)");
    assert_null(buf);
}

/* A fifo (no writer: an open that waited would hang the test) and a folder
 * where the file should be: EPATH. A path with "..": EPATH. */
static void test_read_not_a_file(void **state)
{
    fx_t *f = *state;
    char why[256], p[512], *buf;
    size_t len;
    snprintf(p, sizeof(p), "%s/j/w/fifo", f->root);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(READ(f, "j/w/fifo", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'j/w/fifo' is not a regular file");
    assert_int_equal(READ(f, "j/w", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'j/w' is not a regular file");
    assert_int_equal(READ(f, "j/../j/w/steps.json", 1 << 20, why), PROFD_EPATH);
    assert_string_equal(why, "'j/../j/w/steps.json' is not a plain relative path");
    assert_null(buf);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_read_whole, test_read_limit, test_read_gone,
                       test_read_symlinks, test_read_not_a_file);
}
