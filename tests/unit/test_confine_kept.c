// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A confined folder kept open across a run of files (pd_confine_parent_kept)
 * and a file opened in a folder descriptor (pd_confine_open_in): files land
 * in the folder their path names, the same folder is not walked to again,
 * another folder or another root is, and a symlink put in the tree after
 * the folder was kept is still never followed below it. And a folder made
 * by pd_confine_dir only when it is not there: never through a dangling
 * symlink, nor over a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "job.h"
#include "profd/errors.h"
#include "unit_fixture.h"

typedef struct fx {
    unit_dir_t d;
    char root[128];
    int rfd;
} fx_t;

static int setup(void **state)
{
    unit_dir_setup(state, sizeof(fx_t), "profd-kept", "root");
    fx_t *f = *state;
    char why[256];
    snprintf(f->root, sizeof(f->root), "%s", f->d.path);
    assert_int_equal(pd_mkdirs(f->root, 0755), 0);
    assert_int_equal(pd_confine_root(f->root, &f->rfd, why, sizeof(why)), 0);
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    close(f->rfd);
    return unit_dir_teardown(state);
}

/* `text` written as the new file `name` in the folder `dir`. */
static void put_at(int dir, const char *name, const char *text)
{
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(close(fd), 0);
}

/* The text of <base>/<rel>, "" when there is none. */
static const char *text_of(const char *base, const char *rel)
{
    static char buf[256];
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", base, rel);
    int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    buf[0] = '\0';
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    return buf;
}

static bool there(const char *base, const char *rel)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", base, rel);
    return lstat(p, &st) == 0;
}

static void link_at(const char *target, const char *base, const char *rel)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", base, rel);
    assert_int_equal(symlink(target, p), 0);
}

/* Files in one folder share its descriptor; the next folder, made as it is
 * reached, gets its own; each file lands where its path says. */
static void test_kept_same_folder_once(void **state)
{
    fx_t *f = *state;
    pd_confine_kept_t k;
    char why[256];
    const char *base;
    int d1, d2, d3;
    pd_confine_kept_init(&k);
    assert_int_equal(k.fd, -1);
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/r0/a.json", true, &d1, &base, why, sizeof(why)), 0);
    assert_string_equal(base, "a.json");
    assert_int_equal(d1, k.fd);
    assert_string_equal(k.rel, "j/w/r0");
    put_at(d1, base, "A");
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/r0/b.json", true, &d2, &base, why, sizeof(why)), 0);
    assert_int_equal(d2, d1); /* the same descriptor: not walked to again */
    assert_string_equal(base, "b.json");
    put_at(d2, base, "B");
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/r0/sub/c.json", true, &d3, &base, why, sizeof(why)),
        0);
    assert_string_equal(k.rel, "j/w/r0/sub");
    assert_string_equal(base, "c.json");
    put_at(d3, base, "C");
    /* "j/w/r0" again after "j/w/r0/sub": walked to afresh, not a prefix match */
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/r0/d.json", false, &d1, &base, why, sizeof(why)),
        0);
    assert_string_equal(k.rel, "j/w/r0");
    put_at(d1, base, "D");
    /* a file at the root itself: the folder "" */
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "top.json", false, &d1, &base, why, sizeof(why)), 0);
    assert_string_equal(k.rel, "");
    assert_string_equal(base, "top.json");
    put_at(d1, base, "T");
    pd_confine_kept_close(&k);
    assert_int_equal(k.fd, -1);
    assert_string_equal(text_of(f->root, "j/w/r0/a.json"), "A");
    assert_string_equal(text_of(f->root, "j/w/r0/b.json"), "B");
    assert_string_equal(text_of(f->root, "j/w/r0/sub/c.json"), "C");
    assert_string_equal(text_of(f->root, "j/w/r0/d.json"), "D");
    assert_string_equal(text_of(f->root, "top.json"), "T");
}

/* The same folder text below another root is that root's folder. */
static void test_kept_other_root(void **state)
{
    fx_t *f = *state;
    pd_confine_kept_t k;
    char why[256], other[160];
    const char *base;
    int o, d;
    snprintf(other, sizeof(other), "%s/other", f->d.dir);
    assert_int_equal(pd_mkdirs(other, 0755), 0);
    assert_int_equal(pd_confine_root(other, &o, why, sizeof(why)), 0);
    pd_confine_kept_init(&k);
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "a/x.json", true, &d, &base, why, sizeof(why)), 0);
    put_at(d, base, "root");
    assert_int_equal(pd_confine_parent_kept(&k, o, "a/x.json", true, &d, &base, why, sizeof(why)),
                     0);
    assert_int_equal(k.root, o);
    put_at(d, base, "other");
    pd_confine_kept_close(&k);
    close(o);
    assert_string_equal(text_of(f->root, "a/x.json"), "root");
    assert_string_equal(text_of(other, "a/x.json"), "other");
}

/* A symlink put in the tree after the folder was kept: below the kept
 * folder it is refused, nothing is made where it points; above it, the
 * next folder is walked to from the root and refused there; the kept
 * folder itself is the folder it was when it was opened (moved aside by
 * whoever swapped the link in, it is still that folder, not the link's
 * target). */
static void test_kept_symlink_after(void **state)
{
    fx_t *f = *state;
    pd_confine_kept_t k;
    char why[256], out[160];
    const char *base;
    int d;
    snprintf(out, sizeof(out), "%s/out", f->d.dir);
    assert_int_equal(pd_mkdirs(out, 0755), 0);
    pd_confine_kept_init(&k);
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/a.json", true, &d, &base, why, sizeof(why)), 0);
    put_at(d, base, "A");

    link_at(out, f->root, "j/w/sub"); /* below the kept folder */
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/sub/x/b.json", true, &d, &base, why, sizeof(why)),
        PROFD_EPATH);
    assert_string_equal(why, "'j/w/sub' is a symlink (not followed)");
    assert_int_equal(k.fd, -1); /* nothing kept after a refusal */
    assert_false(there(out, "x"));

    /* kept again, then j swapped for a symlink to out */
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/c.json", true, &d, &base, why, sizeof(why)), 0);
    char p[512], q[512];
    snprintf(p, sizeof(p), "%s/j", f->root);
    snprintf(q, sizeof(q), "%s/j.real", f->root);
    assert_int_equal(rename(p, q), 0);
    assert_int_equal(pd_mkdirs(out, 0755), 0);
    link_at(out, f->root, "j");
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/w/c.json", true, &d, &base, why, sizeof(why)), 0);
    put_at(d, base, "C"); /* the kept folder: the real one, moved */
    assert_string_equal(text_of(f->root, "j.real/w/c.json"), "C");
    assert_false(there(out, "w"));
    assert_int_equal(
        pd_confine_parent_kept(&k, f->rfd, "j/v/e.json", true, &d, &base, why, sizeof(why)),
        PROFD_EPATH);
    assert_string_equal(why, "'j' is a symlink (not followed)");
    assert_false(there(out, "v"));
    pd_confine_kept_close(&k);
}

/* Paths that are not plain are refused before anything is opened. */
static void test_kept_bad_path(void **state)
{
    fx_t *f = *state;
    static const char *const bad[] = {"", "/abs/x", "a/../b", "a//b", "./a", "a/"};
    pd_confine_kept_t k;
    char why[256];
    const char *base;
    int d;
    pd_confine_kept_init(&k);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char want[300];
        assert_int_equal(
            pd_confine_parent_kept(&k, f->rfd, bad[i], true, &d, &base, why, sizeof(why)),
            PROFD_EPATH);
        snprintf(want, sizeof(want), "'%s' is not a plain relative path", bad[i]);
        assert_string_equal(why, want);
        assert_int_equal(k.fd, -1);
    }
    assert_false(there(f->root, "a"));
    assert_false(there(f->root, "b"));
}

/* A file in a folder descriptor: a regular file opened with its status; a
 * symlink, a fifo or a folder refused by name; one not there, an I/O
 * error with its errno. */
static void test_open_in(void **state)
{
    fx_t *f = *state;
    char why[256];
    struct stat st;
    int fd;
    put_at(f->rfd, "file", "inside");
    link_at("file", f->root, "flink");
    char p[512];
    snprintf(p, sizeof(p), "%s/fifo", f->root);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(mkdirat(f->rfd, "dir", 0755), 0);

    assert_int_equal(pd_confine_open_in(f->rfd, "file", "x/file", &fd, &st, why, sizeof(why)), 0);
    assert_int_equal(st.st_size, 6);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* blocking again */
    assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND), O_RDONLY);
    char got[8] = "";
    assert_int_equal(read(fd, got, sizeof(got)), 6);
    assert_string_equal(got, "inside");
    close(fd);
    assert_int_equal(pd_confine_open_in(f->rfd, "flink", "x/flink", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'x/flink' is a symlink (not followed)");
    assert_int_equal(pd_confine_open_in(f->rfd, "fifo", "x/fifo", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'x/fifo' is not a regular file");
    assert_int_equal(pd_confine_open_in(f->rfd, "dir", "x/dir", &fd, &st, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'x/dir' is not a regular file");
    assert_int_equal(pd_confine_open_in(f->rfd, "none", "x/none", &fd, &st, why, sizeof(why)),
                     PROFD_EIO);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(why, "cannot open 'x/none': No such file or directory");
}

/* pd_confine_dir with create opens a folder that is there (its content
 * kept), makes one that is not, and makes nothing through a dangling
 * symlink or over a file. */
static void test_dir_create_only_missing(void **state)
{
    fx_t *f = *state;
    char why[256], out[160];
    int fd;
    snprintf(out, sizeof(out), "%s/out", f->d.dir);
    assert_int_equal(mkdirat(f->rfd, "a", 0700), 0);
    put_at(f->rfd, "a/keep", "K");
    assert_int_equal(pd_confine_dir(f->rfd, "a/b", true, &fd, why, sizeof(why)), 0);
    put_at(fd, "f", "F");
    close(fd);
    struct stat st;
    char p[512];
    snprintf(p, sizeof(p), "%s/a", f->root);
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700); /* there already: left as it was */
    snprintf(p, sizeof(p), "%s/a/b", f->root);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_string_equal(text_of(f->root, "a/keep"), "K");
    assert_string_equal(text_of(f->root, "a/b/f"), "F");

    link_at(out, f->root, "a/dangling"); /* out is not there */
    assert_int_equal(pd_confine_dir(f->rfd, "a/dangling/x", true, &fd, why, sizeof(why)),
                     PROFD_EPATH);
    assert_string_equal(why, "'a/dangling' is a symlink (not followed)");
    assert_false(there(f->d.dir, "out"));
    assert_int_equal(pd_confine_dir(f->rfd, "a/keep/x", true, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_string_equal(why, "'a/keep' is not a folder");
    assert_false(there(f->root, "a/keep/x"));
}

/* A walk starts at the root's descriptor without a copy of it and never
 * closes it, whether it succeeds, is refused or fails; "" is the root
 * itself, as a descriptor of its own. */
static void test_dir_root_stays_open(void **state)
{
    fx_t *f = *state;
    char why[256];
    struct stat st, rst;
    int fd;
    assert_int_equal(pd_confine_dir(f->rfd, "a/b", true, &fd, why, sizeof(why)), 0);
    assert_true(fd != f->rfd);
    close(fd);
    link_at("a", f->root, "l");
    assert_int_equal(pd_confine_dir(f->rfd, "l/b", true, &fd, why, sizeof(why)), PROFD_EPATH);
    assert_int_equal(pd_confine_dir(f->rfd, "none/b", false, &fd, why, sizeof(why)), PROFD_EIO);
    assert_int_equal(pd_confine_dir(f->rfd, "a", false, &fd, why, sizeof(why)), 0);
    close(fd);
    assert_true(fcntl(f->rfd, F_GETFD) >= 0); /* still open */
    assert_int_equal(fstatat(f->rfd, "a/b", &st, AT_SYMLINK_NOFOLLOW), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(pd_confine_dir(f->rfd, "", false, &fd, why, sizeof(why)), 0);
    assert_true(fd != f->rfd);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(fstat(f->rfd, &rst), 0);
    assert_int_equal(st.st_ino, rst.st_ino);
    close(fd);
    assert_true(fcntl(f->rfd, F_GETFD) >= 0);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_kept_same_folder_once, test_kept_other_root,
                       test_kept_symlink_after, test_kept_bad_path, test_open_in,
                       test_dir_create_only_missing, test_dir_root_stays_open);
}
