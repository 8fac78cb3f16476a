// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Security of the daemon core against hostile capture reports, the daemon
 * running in a thread of this process (daemon_fixture) and driven over nng
 * like any peer by a raw worker: paths outside the spool, "..", absolute
 * paths, symlinks, special files, hard links, foreign owners, odd names,
 * deep nesting, too many files, NUL bytes, another rank's, role's, phase's
 * or window's folder, a symlinked window folder. Each case asserts the
 * exact manifest status and reason, and that nothing from outside the
 * spool reaches the save_path tree. (Budgets, the disk floor and rate
 * limits: test_security_limits.c.)
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "security_common.h"

#include "pd_skip.h" /* after cmocka.h */

#define SECRET "TOP-SECRET-outside-the-spool"

FX_TMP_FIXTURE("profd-sectest")

/* ---- files ---- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fail_msg("create %s: %s", path, strerror(errno));
    }
    fputs(text, f);
    fclose(f);
}

/* Fail if any file below `dir` (not .spool) holds `needle` or is a symlink,
 * a fifo, a socket or a device: nothing from outside may come in. */
static void assert_tree_clean(const char *dir, const char *needle, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        char p[2048];
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            (depth == 0 && strcmp(de->d_name, ".spool") == 0)) {
            continue;
        }
        fx_path_of(p, sizeof(p), "%s/%s", dir, de->d_name);
        assert_int_equal(lstat(p, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            assert_tree_clean(p, needle, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            char *text = fx_slurp(p);
            assert_non_null(text);
            if (strstr(text, needle) != NULL) {
                fail_msg("%s holds '%s': read from outside the spool", p, needle);
            }
            free(text);
        } else {
            fail_msg("%s in the save_path tree is not a file or folder", p);
        }
    }
    closedir(d);
}

/* ---- the daemon ---- */
/* ---- hostile captures ---- */

typedef struct hcase {
    const char *phase;
    void (*setup)(const char *capdir); /* the expected folder in the spool */
    const char *dir;                   /* reported folder; NULL = the expected one, "-" = none */
    const char *role;                  /* reported role; NULL = actor */
    const char *extra;                 /* more JSON members of the capture, or NULL */
    const char *status;                /* expected in the manifest */
    const char *reason;                /* expected, %s = the expected folder; NULL = none */
    bool root_only;                    /* needs root (another owner, a device) */
} hcase_t;

static char outside[512]; /* a folder outside the spool, holding SECRET */

static void put_trace(const char *capdir)
{
    char p[1024];
    fx_mkdirs(capdir);
    fx_path_of(p, sizeof(p), "%s/trace.json", capdir);
    write_file(p, "{\"traceEvents\":[]}");
}

/* The trace, and the path of `name` in the capture folder for the case to
 * put there or change (valid until the next call). */
static const char *beside_trace(const char *capdir, const char *name)
{
    static char p[1024];
    put_trace(capdir);
    fx_path_of(p, sizeof(p), "%s/%s", capdir, name);
    return p;
}

static void s_good(const char *capdir)
{
    put_trace(capdir);
}

static void s_nothing(const char *capdir)
{
}

static void s_folder_symlink(const char *capdir)
{
    char parent[1024];
    snprintf(parent, sizeof(parent), "%s", capdir);
    *strrchr(parent, '/') = '\0';
    fx_mkdirs(parent);
    assert_int_equal(symlink("/etc", capdir), 0);
}

static void s_symlink_inside(const char *capdir)
{
    assert_int_equal(symlink("/etc/passwd", beside_trace(capdir, "passwd")), 0);
}

static void s_symlink_to_secret_dir(const char *capdir)
{
    assert_int_equal(symlink(outside, beside_trace(capdir, "more")), 0);
}

static void s_parent_symlink(const char *capdir)
{
    /* actor.cNN -> outside, where outside/rank0-h1 is a plausible capture */
    char parent[1024], decoy[1024];
    snprintf(parent, sizeof(parent), "%s", capdir);
    *strrchr(parent, '/') = '\0';
    char grand[1024];
    snprintf(grand, sizeof(grand), "%s", parent);
    *strrchr(grand, '/') = '\0';
    fx_mkdirs(grand);
    fx_path_of(decoy, sizeof(decoy), "%s/rank0-h1", outside);
    fx_mkdirs(decoy);
    assert_int_equal(symlink(outside, parent), 0);
}

static void s_fifo(const char *capdir)
{
    assert_int_equal(mkfifo(beside_trace(capdir, "fifo"), 0644), 0);
}

static void s_socket(const char *capdir)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    put_trace(capdir);
    fx_path_of(sa.sun_path, sizeof(sa.sun_path), "%s/sock", capdir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
}

static void s_device(const char *capdir)
{
    assert_int_equal(mknod(beside_trace(capdir, "null"), S_IFCHR | 0666, makedev(1, 3)), 0);
}

static void s_hardlink(const char *capdir)
{
    char src[1024];
    fx_path_of(src, sizeof(src), "%s/secret.txt", outside);
    assert_int_equal(link(src, beside_trace(capdir, "secret.txt")), 0);
}

static void s_deep(const char *capdir)
{
    char p[2048];
    put_trace(capdir);
    snprintf(p, sizeof(p), "%s", capdir);
    for (int i = 0; i < 18; i++) {
        strcat(p, "/d");
    }
    fx_mkdirs(p);
}

static void s_many(const char *capdir)
{
    char p[1024];
    fx_mkdirs(capdir);
    for (int i = 0; i < 60; i++) {
        fx_path_of(p, sizeof(p), "%s/f%02d", capdir, i);
        write_file(p, "x");
    }
}

static void s_newline_name(const char *capdir)
{
    write_file(beside_trace(capdir, "bad\nname"), "x");
}

static void s_not_utf8(const char *capdir)
{
    write_file(beside_trace(capdir, "\xff\xfe.json"), "x");
}

static void s_foreign_folder(const char *capdir)
{
    put_trace(capdir);
    assert_int_equal(chown(capdir, 65534, 65534), 0);
}

static void s_foreign_file(const char *capdir)
{
    assert_int_equal(chown(beside_trace(capdir, "trace.json"), 65534, 65534), 0);
}

static void s_file_not_folder(const char *capdir)
{
    char parent[1024];
    snprintf(parent, sizeof(parent), "%s", capdir);
    *strrchr(parent, '/') = '\0';
    fx_mkdirs(parent);
    write_file(capdir, "not a folder");
}

static void s_part(const char *capdir)
{
    write_file(beside_trace(capdir, "trace2.json.part"), "{");
}

#define NOT_HERE "capture folder '%s' is not where this capture belongs"

static const hcase_t cases[] = {
    {"c01", s_good, NULL, NULL, NULL, "complete", NULL, false},
    {"c02", s_good, "/etc", NULL, NULL, "failed",
     "capture folder '/etc' is not where this capture belongs", false},
    {"c03", s_good, "sec/w1-step1/actor.c03/../../../../../../etc", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c03/../../../../../../etc' is not where this capture "
     "belongs",
     false},
    {"c04", s_good, "../outside", NULL, NULL, "failed",
     "capture folder '../outside' is not where this capture belongs", false},
    {"c05", s_good, "sec/w1-step1/actor.c05/rank1-h1", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c05/rank1-h1' is not where this capture belongs", false},
    {"c06", s_good, NULL, "rollout", NULL, "failed",
     "capture role or phase does not match the rank", false},
    {"c07", s_good, "sec/w9-step1/actor.c07/rank0-h1", NULL, NULL, "failed",
     "capture folder 'sec/w9-step1/actor.c07/rank0-h1' is not where this capture belongs", false},
    {"c08", s_good, "sec/w1-step1/actor.c08/rank0-other", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c08/rank0-other' is not where this capture belongs",
     false},
    {"c09", s_good, "sec/w1-step1/actor.c09/rank0-h1\n", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c09/rank0-h1\\x0a' is not where this capture belongs",
     false},
    {"c10", s_folder_symlink, NULL, NULL, NULL, "failed",
     "capture folder '%s' is a symlink (not followed)", false},
    {"c11", s_symlink_inside, NULL, NULL, NULL, "failed",
     "'passwd' in the capture is a symlink (not followed)", false},
    {"c12", s_symlink_to_secret_dir, NULL, NULL, NULL, "failed",
     "'more' in the capture is a symlink (not followed)", false},
    {"c13", s_parent_symlink, NULL, NULL, NULL, "failed",
     "spool: 'sec/w1-step1/actor.c13' is a symlink (not followed)", false},
    {"c14", s_fifo, NULL, NULL, NULL, "failed", "'fifo' in the capture is a fifo", false},
    {"c15", s_socket, NULL, NULL, NULL, "failed", "'sock' in the capture is a socket", false},
    {"c16", s_device, NULL, NULL, NULL, "failed", "'null' in the capture is a character device",
     true},
    {"c17", s_hardlink, NULL, NULL, NULL, "failed", "'secret.txt' in the capture has 2 hard links",
     false},
    {"c18", s_deep, NULL, NULL, NULL, "failed", "capture folders nested deeper than 16", false},
    {"c19", s_many, NULL, NULL, NULL, "truncated", "more than 50 files and folders in the capture",
     false},
    {"c20", s_newline_name, NULL, NULL, NULL, "failed",
     "'bad\\x0aname' in the capture: a name with a control character or not UTF-8", false},
    {"c21", s_not_utf8, NULL, NULL, NULL, "failed",
     "'\\xff\\xfe.json' in the capture: a name with a control character or not UTF-8", false},
    {"c22", s_foreign_folder, NULL, NULL, NULL, "failed",
     "capture folder '%s' belongs to uid 65534, not to the worker that reported it (uid 0)", true},
    {"c23", s_foreign_file, NULL, NULL, NULL, "failed",
     "'trace.json' in the capture belongs to uid 65534, not to the worker that reported it (uid "
     "0)",
     true},
    {"c24", s_file_not_folder, NULL, NULL, NULL, "failed", "capture folder '%s' is not a folder",
     false},
    {"c25", s_nothing, NULL, NULL, NULL, "failed", "capture folder '%s' is missing", false},
    {"c26", s_part, NULL, NULL, NULL, "truncated",
     "the profiler left an incomplete (.part) file, removed: trace2.json.part", false},
    /* the report's own file list and free text never reach the manifest as sent */
    {"c27", s_nothing, "-", NULL,
     "\"reason\":\"evil\\nline \\u001b[31m\",\"files\":[{\"path\":\"/etc/shadow\",\"bytes\":1}]",
     "failed", "evil\\x0aline \\x1b[31m", false},
    {"c29", s_good, "sec/w1-step1/actor.c01/rank0-h1", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c01/rank0-h1' is not where this capture belongs", false},
    {"c28", s_good, "sec/w1-step1/actor.c28//rank0-h1", NULL, NULL, "failed",
     "capture folder 'sec/w1-step1/actor.c28//rank0-h1' is not where this capture belongs", false},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void make_outside(void)
{
    char p[1024];
    fx_path_of(outside, sizeof(outside), "%s/outside", tmp);
    fx_mkdirs(outside);
    fx_path_of(p, sizeof(p), "%s/secret.txt", outside);
    write_file(p, SECRET "\n");
}

static void test_security_hostile_captures(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "hostile");
    bool root = geteuid() == 0;
    char body[65536], capdir[1024], expect[1024], reason[256];
    pp_msg_t rep;

    r->cfg.max_capture_files = 50;
    fx_daemon_start(r);
    make_outside();
    nng_socket w = fx_dial(r->cfg.worker_url);
    nng_socket other = fx_dial(r->cfg.worker_url);
    int64_t client = sec_hello(w, 0, "h1");
    int64_t client1 = sec_hello(other, 1, "h1"); /* rank 1: c05 reports its folder */
    sec_start_window(r, 1, "w1-step1");

    /* a NUL in a string refuses the whole report: the daemon would
     * otherwise act on a different path than the one sent */
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[{\"role\":"
             "\"actor\",\"phase\":\"c01\",\"status\":\"complete\",\"dir\":"
             "\"sec/w1-step1/actor.c01/rank0-h1\\u0000/../../../../etc\"}]}",
             (long long)client);
    assert_int_equal(fx_ask(w, body, &rep), PROFD_EPROTO);
    assert_string_equal(rep.u.error.message, "a string holds a NUL character (\\u0000)");
    pp_msg_free(&rep);

    size_t n = (size_t)snprintf(body, sizeof(body),
                                "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,"
                                "\"captures\":[",
                                (long long)client);
    size_t ncases = 0;
    for (size_t i = 0; i < NCASES; i++) {
        const hcase_t *c = &cases[i];
        if (c->root_only && !root) {
            continue;
        }
        fx_path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.%s/rank0-h1",
                   r->cfg.save_path, c->phase);
        c->setup(capdir);
        char dir[512];
        if (c->dir && strcmp(c->dir, "-") == 0) {
            snprintf(dir, sizeof(dir), "null");
        } else {
            /* JSON-escape the few bytes the table uses */
            const char *src = c->dir ? c->dir : NULL;
            char plain[256];
            if (src == NULL) {
                snprintf(plain, sizeof(plain), "sec/w1-step1/actor.%s/rank0-h1", c->phase);
                src = plain;
            }
            size_t k = 0;
            dir[k++] = '"';
            for (const char *p = src; *p; p++) {
                k += (size_t)(*p == '\n' ? snprintf(dir + k, sizeof(dir) - k, "\\n")
                                         : snprintf(dir + k, sizeof(dir) - k, "%c", *p));
            }
            snprintf(dir + k, sizeof(dir) - k, "\"");
        }
        n += (size_t)snprintf(body + n, sizeof(body) - n,
                              "%s{\"role\":\"%s\",\"phase\":\"%s\",\"status\":\"%s\","
                              "\"first_step\":1,\"last_step\":1,\"dir\":%s%s%s}",
                              ncases ? "," : "", c->role ? c->role : "actor", c->phase,
                              c->extra ? "failed" : "complete", dir, c->extra ? "," : "",
                              c->extra ? c->extra : "");
        assert_true(n < sizeof(body));
        ncases++;
    }
    snprintf(body + n, sizeof(body) - n, "]}");
    assert_true(ncases >= 25);
    assert_int_equal(fx_ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    /* rank 1 reports nothing: the window is done once it does */
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[]}",
             (long long)client1);
    assert_int_equal(fx_ask(other, body, &rep), 0);
    pp_msg_free(&rep);
    sec_wait_done(r, 1, reason, sizeof(reason));
    assert_string_equal(reason, "");

    pp_manifest_t man;
    sec_read_manifest(r, "w1-step1", &man);
    assert_int_equal(man.captures_n, ncases);
    for (size_t i = 0; i < NCASES; i++) {
        const hcase_t *c = &cases[i];
        if (c->root_only && !root) {
            continue;
        }
        const pp_capture_t *cap = sec_capture_of(&man, c->phase);
        snprintf(capdir, sizeof(capdir), "sec/w1-step1/actor.%s/rank0-h1", c->phase);
        if (strcmp(pp_status_name(cap->status), c->status) != 0) {
            fail_msg("%s: status %s, want %s (%s)", c->phase, pp_status_name(cap->status),
                     c->status, cap->reason ? cap->reason : "no reason");
        }
        if (c->reason == NULL) {
            assert_null(cap->reason);
        } else {
            snprintf(expect, sizeof(expect), c->reason, capdir);
            if (cap->reason == NULL || strcmp(cap->reason, expect) != 0) {
                fail_msg("%s: reason '%s', want '%s'", c->phase, cap->reason ? cap->reason : "",
                         expect);
            }
        }
        if (strcmp(pp_status_name(cap->status), "complete") == 0 || strcmp(c->phase, "c26") == 0) {
            /* gathered: listed from the daemon's own walk */
            assert_non_null(cap->dir);
            assert_true(cap->files_n >= 1);
            assert_string_equal(cap->files[0].path, "trace.json");
            if (strcmp(c->phase, "c26") == 0) { /* the profiler's partial file went */
                assert_int_equal(cap->files_n, 1);
                fx_path_of(expect, sizeof(expect), "%s/%s/trace2.json.part", r->cfg.save_path,
                           capdir);
                assert_false(fx_exists(expect));
            }
        } else {
            assert_null(cap->dir);
            assert_int_equal(cap->files_n, 0);
        }
    }
    pp_record_free(&pp_desc_manifest, &man);

    /* nothing from outside came in; what was refused was not touched */
    assert_tree_clean(r->cfg.save_path, SECRET, 0);
    assert_tree_clean(r->cfg.save_path, "root:x:0:0", 0);
    fx_path_of(capdir, sizeof(capdir), "%s/sec/w1-step1/actor.c13", r->cfg.save_path);
    assert_false(fx_exists(capdir));
    fx_path_of(capdir, sizeof(capdir), "%s/secret.txt", outside);
    char *text = fx_slurp(capdir);
    assert_string_equal(text, SECRET "\n");
    free(text);
    fx_path_of(capdir, sizeof(capdir), "%s/rank0-h1", outside);
    assert_true(fx_exists(capdir)); /* the decoy behind the symlinked folder stayed */
    /* a refused capture stays in the spool; one over a limit is removed */
    fx_path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.c11/rank0-h1/passwd",
               r->cfg.save_path);
    assert_true(fx_exists(capdir));
    fx_path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.c19/rank0-h1",
               r->cfg.save_path);
    assert_false(fx_exists(capdir));
    /* the good one moved */
    fx_path_of(capdir, sizeof(capdir), "%s/sec/w1-step1/actor.c01/rank0-h1/trace.json",
               r->cfg.save_path);
    assert_true(fx_exists(capdir));

    nng_close(w);
    nng_close(other);
    fx_daemon_free(r);
}

/* The window folder in the save_path tree is a symlink: nothing is written
 * through it, neither a capture nor the manifest. */
static void test_security_window_folder_symlink(void **state)
{
    fx_daemon_t *r = sec_daemon(tmp, "winlink");
    char p[1024], target[1024], reason[256], body[512];
    pp_msg_t rep;
    fx_daemon_start(r);
    fx_path_of(target, sizeof(target), "%s/winlink/elsewhere", tmp);
    fx_mkdirs(target);
    fx_path_of(p, sizeof(p), "%s/sec", r->cfg.save_path);
    fx_mkdirs(p);
    fx_path_of(p, sizeof(p), "%s/sec/w1-step1", r->cfg.save_path);
    assert_int_equal(symlink(target, p), 0);

    nng_socket w = fx_dial(r->cfg.worker_url);
    int64_t client = sec_hello(w, 0, "h1");
    sec_start_window(r, 1, "w1-step1");
    fx_path_of(p, sizeof(p), "%s/.spool/sec/w1-step1/actor.gen/rank0-h1", r->cfg.save_path);
    put_trace(p);
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[{\"role\":"
             "\"actor\",\"phase\":\"gen\",\"status\":\"complete\",\"first_step\":1,"
             "\"dir\":\"sec/w1-step1/actor.gen/rank0-h1\"}]}",
             (long long)client);
    assert_int_equal(fx_ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    /* a window is done only once its manifest exists: this one never can */
    fx_wait_state(r->cfg.control_url, 1, "failed", reason, sizeof(reason));
    assert_string_equal(reason,
                        "manifest not written: save_path tree: 'sec/w1-step1' is a symlink (not "
                        "followed)");
    snprintf(body, sizeof(body), "{\"v\":1,\"type\":\"windows\",\"id\":1}");
    assert_int_equal(fx_ask_once(r->cfg.control_url, body, &rep), 0);
    assert_int_equal(rep.u.windows_reply.windows[0].failed, 1);
    assert_int_equal(rep.u.windows_reply.windows[0].complete, 0);
    pp_msg_free(&rep);
    DIR *d = opendir(target);
    struct dirent *de;
    int entries = 0;
    while ((de = readdir(d)) != NULL) {
        entries += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    }
    closedir(d);
    assert_int_equal(entries, 0); /* nothing written through the symlink */
    nng_close(w);
    fx_daemon_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_security_hostile_captures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_window_folder_symlink, setup, teardown),
    };
    return PD_RUN_TESTS(tests, NULL, NULL);
}
