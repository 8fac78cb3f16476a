// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Security of the daemon core, running in a thread of this process and
 * driven over nng like any peer: hostile capture reports from a raw worker
 * (paths outside the spool, "..", absolute paths, symlinks, special files,
 * hard links, foreign owners, odd names, deep nesting, too many files, NUL
 * bytes, another rank's, role's, phase's or window's folder, a symlinked
 * window folder), the window byte budget shared
 * by concurrent captures, the free-disk floor, and the per-connection rate
 * limits. Each case asserts the exact manifest status and reason, and that
 * nothing from outside the spool reaches the save_path tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "daemon.h"
#include "pd_skip.h"

#define SECRET "TOP-SECRET-outside-the-spool"

typedef struct running {
    pd_daemon_t d;
    pthread_t thread;
    pd_config_t cfg;
} running_t;

static char tmp[256];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- files ---- */

static void path_of(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < len);
}

static void mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        fail_msg("mkdir %s: %s", buf, strerror(errno));
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fail_msg("create %s: %s", path, strerror(errno));
    }
    fputs(text, f);
    fclose(f);
}

static void sized_file(const char *path, off_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    close(fd);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
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
        path_of(p, sizeof(p), "%s/%s", dir, de->d_name);
        assert_int_equal(lstat(p, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            assert_tree_clean(p, needle, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            char *text = slurp(p);
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

static void *run_daemon(void *arg)
{
    running_t *r = arg;
    pd_daemon_run(&r->d);
    return NULL;
}

static running_t *daemon_config(const char *sub)
{
    running_t *r = calloc(1, sizeof(*r));
    char dir[512];
    path_of(dir, sizeof(dir), "%s/%s", tmp, sub);
    mkdirs(dir);
    pd_config_defaults(&r->cfg);
    path_of(r->cfg.run_dir, sizeof(r->cfg.run_dir), "%s/run", dir);
    path_of(r->cfg.save_path, sizeof(r->cfg.save_path), "%s/out", dir);
    r->cfg.log_level = PD_LOG_ERROR;
    r->cfg.client_timeout_ms = 60000;
    r->cfg.max_msg_bytes = 1 << 20;
    return r;
}

static void daemon_start(running_t *r)
{
    char err[512];
    pd_config_finish(&r->cfg);
    if (pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)) != 0) {
        fail_msg("daemon init: %s", err);
    }
    assert_int_equal(pthread_create(&r->thread, NULL, run_daemon, r), 0);
}

static void daemon_stop(running_t *r)
{
    pd_daemon_request_stop(&r->d);
    pthread_join(r->thread, NULL);
    assert_int_equal(pd_daemon_fini(&r->d), 0);
    free(r);
}

/* ---- raw requests ---- */

static nng_socket dial(const char *url)
{
    nng_socket s;
    assert_int_equal(nng_req0_open(&s), 0);
    nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 10000);
    nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 10000);
    assert_int_equal(nng_dial(s, url, NULL, 0), 0);
    return s;
}

/* Send JSON on `s`, decode the reply; the error code (0 for a reply). */
static int ask(nng_socket s, const char *json, pp_msg_t *rep)
{
    nng_msg *m;
    char err[256];
    assert_int_equal(nng_msg_alloc(&m, 0), 0);
    assert_int_equal(nng_msg_append(m, json, strlen(json)), 0);
    assert_int_equal(nng_sendmsg(s, m, 0), 0);
    assert_int_equal(nng_recvmsg(s, &m, 0), 0);
    if (pp_msg_decode(nng_msg_body(m), nng_msg_len(m), 0, rep, err, sizeof(err)) != 0) {
        fail_msg("undecodable reply: %s", err);
    }
    nng_msg_free(m);
    return rep->type == PP_T_error ? (int)rep->u.error.code : 0;
}

static int ask_once(const char *url, const char *json, pp_msg_t *rep)
{
    nng_socket s = dial(url);
    int rv = ask(s, json, rep);
    nng_close(s);
    return rv;
}

/* A worker registered by hand; returns its client id. */
static int64_t hello(nng_socket s, int64_t rank, const char *host)
{
    char q[256];
    pp_msg_t rep;
    snprintf(q, sizeof(q),
             "{\"v\":1,\"type\":\"hello\",\"job\":\"sec\",\"role\":\"actor\",\"rank\":%lld,"
             "\"host\":\"%s\",\"pid\":%d}",
             (long long)rank, host, (int)getpid());
    assert_int_equal(ask(s, q, &rep), 0);
    assert_int_equal(rep.type, PP_T_welcome);
    int64_t id = rep.u.welcome.client;
    pp_msg_free(&rep);
    return id;
}

/* A window over step `step` for the actors; returns its id. */
static int64_t start_window(const running_t *r, int64_t step, const char *name)
{
    char q[160];
    pp_msg_t rep;
    snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"start\",\"steps\":[%lld],\"tool\":\"sim\"}",
             (long long)step);
    assert_int_equal(ask_once(r->cfg.control_url, q, &rep), 0);
    assert_int_equal(rep.u.started.windows_n, 1);
    assert_string_equal(rep.u.started.windows[0].name, name);
    int64_t id = rep.u.started.windows[0].id;
    pp_msg_free(&rep);
    return id;
}

/* Until the window is done; returns its reason ("" none) in `reason`. */
static void wait_state(const running_t *r, int64_t id, const char *want, char *reason, size_t len);
static void wait_done(const running_t *r, int64_t id, char *reason, size_t len)
{
    wait_state(r, id, "done", reason, len);
}

static void wait_state(const running_t *r, int64_t id, const char *want, char *reason, size_t len)
{
    char q[128], state[32] = "";
    snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"windows\",\"id\":%lld}", (long long)id);
    for (int t = 0; t < 1000; t++) {
        pp_msg_t rep;
        assert_int_equal(ask_once(r->cfg.control_url, q, &rep), 0);
        snprintf(state, sizeof(state), "%s",
                 pp_enum_name(&pp_enum_window_state, rep.u.windows_reply.windows[0].state));
        snprintf(reason, len, "%s",
                 rep.u.windows_reply.windows[0].reason ? rep.u.windows_reply.windows[0].reason
                                                       : "");
        pp_msg_free(&rep);
        if (strcmp(state, want) == 0) {
            return;
        }
        sleep_ms(10);
    }
    fail_msg("window %lld is %s, not %s", (long long)id, state, want);
}

static void read_manifest(const running_t *r, const char *window, pp_manifest_t *man)
{
    char path[1024], err[256];
    path_of(path, sizeof(path), "%s/sec/%s/manifest.json", r->cfg.save_path, window);
    char *text = slurp(path);
    if (text == NULL) {
        fail_msg("no manifest %s", path);
    }
    assert_int_equal(pp_record_decode(&pp_desc_manifest, text, strlen(text), man, err, sizeof(err)),
                     0);
    free(text);
}

static const pp_capture_t *capture_of(const pp_manifest_t *man, const char *phase)
{
    for (size_t i = 0; i < man->captures_n; i++) {
        if (man->captures[i].phase && strcmp(man->captures[i].phase, phase) == 0) {
            return &man->captures[i];
        }
    }
    fail_msg("no capture of phase %s in the manifest", phase);
    return NULL;
}

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
    mkdirs(capdir);
    path_of(p, sizeof(p), "%s/trace.json", capdir);
    write_file(p, "{\"traceEvents\":[]}");
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
    mkdirs(parent);
    assert_int_equal(symlink("/etc", capdir), 0);
}

static void s_symlink_inside(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/passwd", capdir);
    assert_int_equal(symlink("/etc/passwd", p), 0);
}

static void s_symlink_to_secret_dir(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/more", capdir);
    assert_int_equal(symlink(outside, p), 0);
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
    mkdirs(grand);
    path_of(decoy, sizeof(decoy), "%s/rank0-h1", outside);
    mkdirs(decoy);
    assert_int_equal(symlink(outside, parent), 0);
}

static void s_fifo(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/fifo", capdir);
    assert_int_equal(mkfifo(p, 0644), 0);
}

static void s_socket(const char *capdir)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    put_trace(capdir);
    path_of(sa.sun_path, sizeof(sa.sun_path), "%s/sock", capdir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
}

static void s_device(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/null", capdir);
    assert_int_equal(mknod(p, S_IFCHR | 0666, makedev(1, 3)), 0);
}

static void s_hardlink(const char *capdir)
{
    char p[1024], src[1024];
    put_trace(capdir);
    path_of(src, sizeof(src), "%s/secret.txt", outside);
    path_of(p, sizeof(p), "%s/secret.txt", capdir);
    assert_int_equal(link(src, p), 0);
}

static void s_deep(const char *capdir)
{
    char p[2048];
    put_trace(capdir);
    snprintf(p, sizeof(p), "%s", capdir);
    for (int i = 0; i < 18; i++) {
        strcat(p, "/d");
    }
    mkdirs(p);
}

static void s_many(const char *capdir)
{
    char p[1024];
    mkdirs(capdir);
    for (int i = 0; i < 60; i++) {
        path_of(p, sizeof(p), "%s/f%02d", capdir, i);
        write_file(p, "x");
    }
}

static void s_newline_name(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/bad\nname", capdir);
    write_file(p, "x");
}

static void s_not_utf8(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/\xff\xfe.json", capdir);
    write_file(p, "x");
}

static void s_foreign_folder(const char *capdir)
{
    put_trace(capdir);
    assert_int_equal(chown(capdir, 65534, 65534), 0);
}

static void s_foreign_file(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/trace.json", capdir);
    assert_int_equal(chown(p, 65534, 65534), 0);
}

static void s_file_not_folder(const char *capdir)
{
    char parent[1024];
    snprintf(parent, sizeof(parent), "%s", capdir);
    *strrchr(parent, '/') = '\0';
    mkdirs(parent);
    write_file(capdir, "not a folder");
}

static void s_part(const char *capdir)
{
    char p[1024];
    put_trace(capdir);
    path_of(p, sizeof(p), "%s/trace2.json.part", capdir);
    write_file(p, "{");
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
    path_of(outside, sizeof(outside), "%s/outside", tmp);
    mkdirs(outside);
    path_of(p, sizeof(p), "%s/secret.txt", outside);
    write_file(p, SECRET "\n");
}

static void test_security_hostile_captures(void **state)
{
    running_t *r = daemon_config("hostile");
    bool root = geteuid() == 0;
    char body[65536], capdir[1024], expect[1024], reason[256];
    pp_msg_t rep;

    r->cfg.max_capture_files = 50;
    daemon_start(r);
    make_outside();
    nng_socket w = dial(r->cfg.worker_url);
    nng_socket other = dial(r->cfg.worker_url);
    int64_t client = hello(w, 0, "h1");
    int64_t client1 = hello(other, 1, "h1"); /* rank 1: c05 reports its folder */
    start_window(r, 1, "w1-step1");

    /* a NUL in a string refuses the whole report: the daemon would
     * otherwise act on a different path than the one sent */
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[{\"role\":"
             "\"actor\",\"phase\":\"c01\",\"status\":\"complete\",\"dir\":"
             "\"sec/w1-step1/actor.c01/rank0-h1\\u0000/../../../../etc\"}]}",
             (long long)client);
    assert_int_equal(ask(w, body, &rep), PROFD_EPROTO);
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
        path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.%s/rank0-h1",
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
    assert_int_equal(ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    /* rank 1 reports nothing: the window is done once it does */
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[]}",
             (long long)client1);
    assert_int_equal(ask(other, body, &rep), 0);
    pp_msg_free(&rep);
    wait_done(r, 1, reason, sizeof(reason));
    assert_string_equal(reason, "");

    pp_manifest_t man;
    read_manifest(r, "w1-step1", &man);
    assert_int_equal(man.captures_n, ncases);
    for (size_t i = 0; i < NCASES; i++) {
        const hcase_t *c = &cases[i];
        if (c->root_only && !root) {
            continue;
        }
        const pp_capture_t *cap = capture_of(&man, c->phase);
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
                path_of(expect, sizeof(expect), "%s/%s/trace2.json.part", r->cfg.save_path, capdir);
                assert_false(exists(expect));
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
    path_of(capdir, sizeof(capdir), "%s/sec/w1-step1/actor.c13", r->cfg.save_path);
    assert_false(exists(capdir));
    path_of(capdir, sizeof(capdir), "%s/secret.txt", outside);
    char *text = slurp(capdir);
    assert_string_equal(text, SECRET "\n");
    free(text);
    path_of(capdir, sizeof(capdir), "%s/rank0-h1", outside);
    assert_true(exists(capdir)); /* the decoy behind the symlinked folder stayed */
    /* a refused capture stays in the spool; one over a limit is removed */
    path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.c11/rank0-h1/passwd",
            r->cfg.save_path);
    assert_true(exists(capdir));
    path_of(capdir, sizeof(capdir), "%s/.spool/sec/w1-step1/actor.c19/rank0-h1", r->cfg.save_path);
    assert_false(exists(capdir));
    /* the good one moved */
    path_of(capdir, sizeof(capdir), "%s/sec/w1-step1/actor.c01/rank0-h1/trace.json",
            r->cfg.save_path);
    assert_true(exists(capdir));

    nng_close(w);
    nng_close(other);
    daemon_stop(r);
}

/* The window folder in the save_path tree is a symlink: nothing is written
 * through it, neither a capture nor the manifest. */
static void test_security_window_folder_symlink(void **state)
{
    running_t *r = daemon_config("winlink");
    char p[1024], target[1024], reason[256], body[512];
    pp_msg_t rep;
    daemon_start(r);
    path_of(target, sizeof(target), "%s/winlink/elsewhere", tmp);
    mkdirs(target);
    path_of(p, sizeof(p), "%s/sec", r->cfg.save_path);
    mkdirs(p);
    path_of(p, sizeof(p), "%s/sec/w1-step1", r->cfg.save_path);
    assert_int_equal(symlink(target, p), 0);

    nng_socket w = dial(r->cfg.worker_url);
    int64_t client = hello(w, 0, "h1");
    start_window(r, 1, "w1-step1");
    path_of(p, sizeof(p), "%s/.spool/sec/w1-step1/actor.gen/rank0-h1", r->cfg.save_path);
    put_trace(p);
    snprintf(body, sizeof(body),
             "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,\"captures\":[{\"role\":"
             "\"actor\",\"phase\":\"gen\",\"status\":\"complete\",\"first_step\":1,"
             "\"dir\":\"sec/w1-step1/actor.gen/rank0-h1\"}]}",
             (long long)client);
    assert_int_equal(ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    /* a window is done only once its manifest exists: this one never can */
    wait_state(r, 1, "failed", reason, sizeof(reason));
    assert_string_equal(reason,
                        "manifest not written: save_path tree: 'sec/w1-step1' is a symlink (not "
                        "followed)");
    snprintf(body, sizeof(body), "{\"v\":1,\"type\":\"windows\",\"id\":1}");
    assert_int_equal(ask_once(r->cfg.control_url, body, &rep), 0);
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
    daemon_stop(r);
}

/* ---- the byte budget ---- */

static void report_sized(running_t *r, nng_socket w, int64_t client, int64_t window,
                         const char *wname, const char *const *phases, const off_t *sizes, size_t n)
{
    char body[4096], p[1024];
    pp_msg_t rep;
    size_t k = (size_t)snprintf(body, sizeof(body),
                                "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":%lld,"
                                "\"captures\":[",
                                (long long)client, (long long)window);
    for (size_t i = 0; i < n; i++) {
        path_of(p, sizeof(p), "%s/.spool/sec/%s/actor.%s/rank0-h1", r->cfg.save_path, wname,
                phases[i]);
        mkdirs(p);
        path_of(p, sizeof(p), "%s/.spool/sec/%s/actor.%s/rank0-h1/trace.bin", r->cfg.save_path,
                wname, phases[i]);
        sized_file(p, sizes[i]);
        k += (size_t)snprintf(body + k, sizeof(body) - k,
                              "%s{\"role\":\"actor\",\"phase\":\"%s\",\"status\":\"complete\","
                              "\"dir\":\"sec/%s/actor.%s/rank0-h1\"}",
                              i ? "," : "", phases[i], wname, phases[i]);
    }
    snprintf(body + k, sizeof(body) - k, "]}");
    assert_int_equal(ask(w, body, &rep), 0);
    pp_msg_free(&rep);
}

static void test_security_budget(void **state)
{
    running_t *r = daemon_config("budget");
    char reason[256], p[1024];
    r->cfg.window_byte_budget = 1024 * 1024;
    daemon_start(r);
    nng_socket w = dial(r->cfg.worker_url);
    int64_t client = hello(w, 0, "h1");

    /* a huge (sparse) file and an empty one */
    start_window(r, 1, "w1-step1");
    const char *ph1[] = {"huge", "small"};
    const off_t sz1[] = {10LL << 30, 0};
    report_sized(r, w, client, 1, "w1-step1", ph1, sz1, 2);
    wait_done(r, 1, reason, sizeof(reason));
    pp_manifest_t man;
    read_manifest(r, "w1-step1", &man);
    const pp_capture_t *c = capture_of(&man, "huge");
    assert_string_equal(pp_status_name(c->status), "truncated");
    assert_string_equal(c->reason, "capture of 10737418240 bytes exceeds the window's remaining "
                                   "budget of 1048576 bytes (limits.window_byte_budget)");
    assert_string_equal(pp_status_name(capture_of(&man, "small")->status), "complete");
    pp_record_free(&pp_desc_manifest, &man);
    path_of(p, sizeof(p), "%s/.spool/sec/w1-step1/actor.huge/rank0-h1", r->cfg.save_path);
    assert_false(exists(p)); /* over a limit: removed from the spool */

    /* two captures gathered at once share the budget: one of them fits */
    start_window(r, 2, "w2-step2");
    const char *ph2[] = {"a", "b"};
    const off_t sz2[] = {600 * 1024, 600 * 1024};
    report_sized(r, w, client, 2, "w2-step2", ph2, sz2, 2);
    wait_done(r, 2, reason, sizeof(reason));
    read_manifest(r, "w2-step2", &man);
    int complete = 0, truncated = 0;
    for (size_t i = 0; i < man.captures_n; i++) {
        c = &man.captures[i];
        if (strcmp(pp_status_name(c->status), "complete") == 0) {
            complete++;
            assert_int_equal(c->files[0].bytes, 600 * 1024);
        } else {
            truncated++;
            assert_string_equal(pp_status_name(c->status), "truncated");
            assert_string_equal(c->reason, "capture of 614400 bytes exceeds the window's "
                                           "remaining budget of 434176 bytes "
                                           "(limits.window_byte_budget)");
        }
    }
    assert_int_equal(complete, 1);
    assert_int_equal(truncated, 1);
    pp_record_free(&pp_desc_manifest, &man);
    nng_close(w);
    daemon_stop(r);
}

/* ---- the free-disk floor ---- */

/* A floor larger than any disk: a window is refused at its start, with the
 * reason (the floor checked while gathering: the tmpfs test below). */
static void test_security_disk_floor(void **state)
{
    running_t *r = daemon_config("floor");
    pp_msg_t rep;
    char want[1100];
    (void)state;
    r->cfg.min_free_bytes = 1LL << 50;
    daemon_start(r);
    nng_socket w = dial(r->cfg.worker_url);
    hello(w, 0, "h1");
    assert_int_equal(ask_once(r->cfg.control_url,
                              "{\"v\":1,\"type\":\"start\",\"steps\":[1],\"tool\":\"sim\"}", &rep),
                     PROFD_ELIMIT);
    snprintf(want, sizeof(want), "save_path %s has ", r->cfg.save_path);
    assert_ptr_equal(strstr(rep.u.error.message, want), rep.u.error.message);
    assert_non_null(
        strstr(rep.u.error.message, " free, below limits.min_free_bytes (1.0PiB): no new window"));
    pp_msg_free(&rep);
    nng_close(w);
    daemon_stop(r);
}

/* With root: save_path on a small tmpfs. A rename into the same file system
 * takes no space and passes while the free space is above the floor; a copy
 * from another file system needs its size. */
static void test_security_disk_floor_tmpfs(void **state)
{
    char small[512], reason[256];
    path_of(small, sizeof(small), "%s/small", tmp);
    mkdirs(small);
    if (mount("tmpfs", small, "tmpfs", 0, "size=4m") != 0) {
        pd_skip("cannot mount a tmpfs (%s): needs root", strerror(errno));
    }
    running_t *r = daemon_config("floor2");
    path_of(r->cfg.save_path, sizeof(r->cfg.save_path), "%s/out", small);
    /* the spool on another file system: gathering copies */
    path_of(r->cfg.spool_dir, sizeof(r->cfg.spool_dir), "%s/floor2/spool", tmp);
    r->cfg.min_free_bytes = 1024 * 1024;
    daemon_start(r);
    nng_socket w = dial(r->cfg.worker_url);
    int64_t client = hello(w, 0, "h1");
    start_window(r, 1, "w1-step1");

    char p[1024];
    const char *ph[] = {"fits", "toobig"};
    const off_t sz[] = {1024 * 1024, 3584 * 1024};
    char body[1024];
    size_t k = (size_t)snprintf(body, sizeof(body),
                                "{\"v\":1,\"type\":\"result\",\"client\":%lld,\"window\":1,"
                                "\"captures\":[",
                                (long long)client);
    for (size_t i = 0; i < 2; i++) {
        path_of(p, sizeof(p), "%s/sec/w1-step1/actor.%s/rank0-h1", r->cfg.spool_dir, ph[i]);
        mkdirs(p);
        path_of(p, sizeof(p), "%s/sec/w1-step1/actor.%s/rank0-h1/trace.bin", r->cfg.spool_dir,
                ph[i]);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *buf = calloc(1, (size_t)sz[i]);
        assert_int_equal(write(fd, buf, (size_t)sz[i]), sz[i]);
        free(buf);
        close(fd);
        k += (size_t)snprintf(body + k, sizeof(body) - k,
                              "%s{\"role\":\"actor\",\"phase\":\"%s\",\"status\":\"complete\","
                              "\"dir\":\"sec/w1-step1/actor.%s/rank0-h1\"}",
                              i ? "," : "", ph[i], ph[i]);
    }
    snprintf(body + k, sizeof(body) - k, "]}");
    pp_msg_t rep;
    assert_int_equal(ask(w, body, &rep), 0);
    pp_msg_free(&rep);
    wait_done(r, 1, reason, sizeof(reason));
    pp_manifest_t man;
    read_manifest(r, "w1-step1", &man);
    /* 4 MiB: 1 MiB copied leaves 3 MiB; 3.5 MiB would leave less than the
     * 1 MiB floor whichever goes first */
    assert_string_equal(pp_status_name(capture_of(&man, "fits")->status), "complete");
    const pp_capture_t *c = capture_of(&man, "toobig");
    assert_string_equal(pp_status_name(c->status), "truncated");
    assert_non_null(strstr(c->reason, "bytes free on the save_path file system; the capture of "
                                      "3670016 bytes would leave less than "
                                      "limits.min_free_bytes (1048576)"));
    pp_record_free(&pp_desc_manifest, &man);
    /* copied across file systems: the spool copy is gone, and after the
     * manifest so is the .trash it waited in */
    path_of(p, sizeof(p), "%s/sec/w1-step1/actor.fits/rank0-h1", r->cfg.spool_dir);
    assert_false(exists(p));
    path_of(p, sizeof(p), "%s/.trash", r->cfg.spool_dir);
    for (int i = 0; i < 500 && exists(p); i++) {
        usleep(10 * 1000);
    }
    assert_false(exists(p));
    path_of(p, sizeof(p), "%s/sec/w1-step1/actor.fits/rank0-h1/trace.bin", r->cfg.save_path);
    assert_true(exists(p));
    nng_close(w);
    daemon_stop(r);
    assert_int_equal(umount2(small, MNT_DETACH), 0);
}

/* ---- rate limits ---- */

static void test_security_rate_limits(void **state)
{
    running_t *r = daemon_config("rate");
    pp_msg_t rep;
    r->cfg.control_rate = 5;
    r->cfg.worker_rate = 20;
    daemon_start(r);

    /* control: 5 at once, then refused; another connection has its own */
    nng_socket s = dial(r->cfg.control_url);
    int64_t t0 = now_ms();
    int ok = 0, limited = 0;
    for (int i = 0; i < 8; i++) {
        int rv = ask(s, "{\"v\":1,\"type\":\"status\"}", &rep);
        if (rv == 0) {
            ok++;
        } else {
            assert_int_equal(rv, PROFD_ELIMIT);
            assert_string_equal(rep.u.error.message, "rate limit: 5 requests/s");
            limited++;
        }
        pp_msg_free(&rep);
    }
    int64_t spent = now_ms() - t0;
    /* refilled at 5/s while asking */
    assert_true(ok >= 5 && ok <= 5 + (int)(spent * 5 / 1000) + 1);
    assert_true(limited >= 1);
    assert_int_equal(ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    pp_msg_free(&rep);
    sleep_ms(400); /* two tokens back */
    assert_int_equal(ask(s, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    pp_msg_free(&rep);
    nng_close(s);

    /* workers: the same, at their own rate; the daemon keeps serving */
    nng_socket w = dial(r->cfg.worker_url);
    int64_t client = hello(w, 0, "h1");
    char q[160];
    t0 = now_ms();
    ok = 0;
    limited = 0;
    for (int i = 0; i < 40; i++) {
        snprintf(q, sizeof(q), "{\"v\":1,\"type\":\"events\",\"client\":%lld,\"ev\":[1,%d,%d]}",
                 (long long)client, i + 1, i * 1000);
        int rv = ask(w, q, &rep);
        if (rv == 0) {
            ok++;
        } else {
            assert_int_equal(rv, PROFD_ELIMIT);
            assert_string_equal(rep.u.error.message, "rate limit: 20 requests/s");
            limited++;
        }
        pp_msg_free(&rep);
    }
    spent = now_ms() - t0;
    assert_true(ok >= 19 && ok <= 19 + (int)(spent * 20 / 1000) + 1); /* hello took one */
    assert_int_equal(ok + limited, 40);
    nng_close(w);
    assert_int_equal(ask_once(r->cfg.control_url, "{\"v\":1,\"type\":\"status\"}", &rep), 0);
    assert_int_equal(rep.u.status_reply.ranks_n, 1);
    pp_msg_free(&rep);
    daemon_stop(r);
}

/* ---- start-up refusals ---- */

static void test_security_startup(void **state)
{
    running_t *r = daemon_config("startup");
    char err[512];

    /* plain tcp:// control, from a flag */
    snprintf(r->cfg.control_url, sizeof(r->cfg.control_url), "tcp://127.0.0.1:0");
    pd_config_finish(&r->cfg);
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err, "control endpoint tcp://127.0.0.1:0: " PD_CONFIG_TCP_CONTROL);

    /* an unknown socket group */
    r->cfg.control_url[0] = '\0';
    snprintf(r->cfg.socket_group, sizeof(r->cfg.socket_group), "no-such-group-here");
    pd_config_finish(&r->cfg);
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err, "security.socket_group: no group named 'no-such-group-here'");

    /* a remote control endpoint without TLS files */
    r->cfg.socket_group[0] = '\0';
    snprintf(r->cfg.control_remote_url, sizeof(r->cfg.control_remote_url), "tls+tcp://localhost:0");
    assert_int_equal(pd_daemon_init(&r->d, &r->cfg, err, sizeof(err)), PROFD_EINVAL);
    assert_string_equal(err, "tls+tcp://localhost:0 needs tls.ca_file, tls.cert_file and "
                             "tls.key_file: TLS: a CA file is needed to verify the peer's "
                             "certificate");
    free(r);
}

static int setup(void **state)
{
    snprintf(tmp, sizeof(tmp), "/tmp/profd-sectest-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/small", tmp);
    umount2(cmd, MNT_DETACH); /* a failed tmpfs test */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_security_hostile_captures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_window_folder_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_disk_floor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_disk_floor_tmpfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_rate_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_startup, setup, teardown),
    };
    return PD_RUN_TESTS(tests, NULL, NULL);
}
