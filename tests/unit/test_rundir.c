// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Where libprofd and profctl look for the daemon with no URL given
 * (client/rundir.h): $PROFD_RUN_DIR on the daemon's terms, else the folder
 * holding the socket, else the system folder when it is a folder, else the
 * per-user one. Fake folders stand in for /run/profd and /tmp/profd-<uid>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "rundir.h"
#include "unit_fixture.h"

static char tmp[64];

static int setup(void **state)
{
    assert_non_null(pd_tmp_make(tmp, sizeof(tmp), "profd-rundir"));
    return 0;
}

static int teardown(void **state)
{
    return pd_tmp_remove(tmp);
}

/* A socket file, as a listening daemon leaves it. */
static void make_socket(const char *dir, const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
}

static void test_rundir_env(void **state)
{
    cl_rundir_t r;
    char buf[256], user[64], long_dir[PP_RUN_DIR_MAX + 2];

    snprintf(user, sizeof(user), "/tmp/profd-%u", (unsigned)getuid());

    setenv("PROFD_RUN_DIR", "/var/tmp/profd-test", 1);
    cl_rundir_init(&r);
    assert_int_equal(r.n, 1);
    assert_false(r.ignored);
    assert_string_equal(r.dirs[0], "/var/tmp/profd-test");
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, "ipc:///var/tmp/profd-test/worker.sock");
    cl_rundir_url(&r, "control.sock", buf, sizeof(buf));
    assert_string_equal(buf, "ipc:///var/tmp/profd-test/control.sock");

    /* the longest the daemon takes */
    memset(long_dir, 'd', sizeof(long_dir));
    long_dir[0] = '/';
    long_dir[PP_RUN_DIR_MAX] = '\0';
    setenv("PROFD_RUN_DIR", long_dir, 1);
    cl_rundir_init(&r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.dirs[0], long_dir);

    /* what the daemon ignores is ignored, and said so */
    const char *ignored[] = {"relative/dir", "run", "./run", NULL};
    long_dir[PP_RUN_DIR_MAX] = 'd';
    long_dir[PP_RUN_DIR_MAX + 1] = '\0';
    for (int i = 0; i < 4; i++) {
        setenv("PROFD_RUN_DIR", ignored[i] ? ignored[i] : long_dir, 1);
        cl_rundir_init(&r);
        assert_int_equal(r.n, 2);
        assert_true(r.ignored);
        assert_string_equal(r.dirs[0], "/run/profd");
        assert_string_equal(r.dirs[1], user);
    }

    /* unset or empty: the search, silently */
    setenv("PROFD_RUN_DIR", "", 1);
    cl_rundir_init(&r);
    assert_int_equal(r.n, 2);
    assert_false(r.ignored);
    unsetenv("PROFD_RUN_DIR");
    cl_rundir_init(&r);
    assert_int_equal(r.n, 2);
    assert_false(r.ignored);
    assert_string_equal(r.dirs[0], "/run/profd");
    assert_string_equal(r.dirs[1], user);
}

static void test_rundir_search(void **state)
{
    cl_rundir_t r;
    char buf[256], want_sys[300], want_user[300], file[300];

    memset(&r, 0, sizeof(r));
    r.n = 2;
    snprintf(r.dirs[0], sizeof(r.dirs[0]), "%s/sys", tmp);
    snprintf(r.dirs[1], sizeof(r.dirs[1]), "%s/user", tmp);
    snprintf(want_sys, sizeof(want_sys), "ipc://%s/sys/worker.sock", tmp);
    snprintf(want_user, sizeof(want_user), "ipc://%s/user/worker.sock", tmp);

    /* neither folder: the per-user one */
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, want_user);

    /* the system one as a file is no folder */
    snprintf(file, sizeof(file), "%s/sys", tmp);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, want_user);
    assert_int_equal(unlink(file), 0);

    /* the system folder, empty: the daemon may start there later */
    assert_int_equal(mkdir(r.dirs[0], 0755), 0);
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, want_sys);

    /* a daemon in the per-user folder wins over the empty system one; a
     * plain file named like the socket is no socket */
    assert_int_equal(mkdir(r.dirs[1], 0700), 0);
    snprintf(file, sizeof(file), "%s/user/worker.sock", tmp);
    f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, want_sys);
    assert_int_equal(unlink(file), 0);
    make_socket(r.dirs[1], "worker.sock");
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    assert_string_equal(buf, want_user);

    /* each socket is looked for by its own name */
    cl_rundir_url(&r, "control.sock", buf, sizeof(buf));
    snprintf(want_sys, sizeof(want_sys), "ipc://%s/sys/control.sock", tmp);
    assert_string_equal(buf, want_sys);

    /* both: the system folder first */
    make_socket(r.dirs[0], "worker.sock");
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    snprintf(want_sys, sizeof(want_sys), "ipc://%s/sys/worker.sock", tmp);
    assert_string_equal(buf, want_sys);

    /* $PROFD_RUN_DIR is taken as it is: no search */
    r.n = 1;
    snprintf(r.dirs[0], sizeof(r.dirs[0]), "%s/absent", tmp);
    cl_rundir_url(&r, "worker.sock", buf, sizeof(buf));
    snprintf(want_sys, sizeof(want_sys), "ipc://%s/absent/worker.sock", tmp);
    assert_string_equal(buf, want_sys);
}

int main(void)
{
    int plain = PD_RUN_EACH(NULL, NULL, test_rundir_env);
    return unit_exit2(plain, PD_RUN_EACH(setup, teardown, test_rundir_search));
}
