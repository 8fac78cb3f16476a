// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The built-in C backends: sim (file names, contents, sizes), exec
 * (variables, placeholders, working folder, exit status, timeouts) and cuda
 * (the failure paths without a CUDA runtime, and a fake runtime for the
 * calls themselves). Each test works in its own temporary folder.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "backend_exec.h" /* cl_exec_outcome: what the background thread asks */
#include "profd/client.h"
#include "pd_skip.h"
#include "pd_tmp.h"

typedef struct fixture {
    char dir[256];
    char settings[8192];
    profd_capture_t cap;
    char reason[256];
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        return -1;
    }
    if (pd_tmp_make(f->dir, sizeof(f->dir), "profd-test-backends") == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->settings, sizeof(f->settings), "{}");
    profd_capture_t *c = &f->cap;
    c->window_id = 7;
    c->window = "w7-steps5-6";
    c->job = "run-42";
    c->role = "rollout";
    c->phase = "generate";
    c->rank = 3;
    c->replica_rank = 1;
    c->first_step = 5;
    c->last_step = 6;
    c->step = 5;
    c->substep = 0;
    c->part = 0;
    c->tool = "sim";
    c->mode = "discrete";
    c->settings_json = f->settings;
    c->dir = f->dir;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    int rv = pd_tmp_remove(f->dir);
    free(f);
    return rv;
}

static char *slurp(const char *dir, const char *name, long *len)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        return NULL;
    }
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    buf[got] = '\0';
    if (len) {
        *len = (long)got;
    }
    return buf;
}

static bool exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static int count_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.';
    }
    if (d) {
        closedir(d);
    }
    return n;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int start(fixture_t *f, const profd_backend_t *b)
{
    f->reason[0] = '\0';
    return b->start(&f->cap, NULL, f->reason, sizeof(f->reason));
}

static int stop(fixture_t *f, const profd_backend_t *b)
{
    f->reason[0] = '\0';
    return b->stop(&f->cap, NULL, f->reason, sizeof(f->reason));
}

/* ---- sim ---- */

/* The one file of `dir` named <worker>.<digits>.pt.trace.json (TensorBoard's
 * naming) into name; false when there is not exactly one. */
static bool trace_named(const char *dir, const char *worker, char *name, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    size_t wl = strlen(worker);
    while (d && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        size_t k = strlen(n);
        if (strncmp(n, worker, wl) != 0 || n[wl] != '.' || k < wl + 16 ||
            strcmp(n + k - 14, ".pt.trace.json") != 0) {
            continue;
        }
        bool digits = true;
        for (const char *p = n + wl + 1; p < n + k - 14; p++) {
            digits &= *p >= '0' && *p <= '9';
        }
        if (digits) {
            snprintf(name, len, "%s", n);
            found++;
        }
    }
    if (d) {
        closedir(d);
    }
    return found == 1;
}

/* Events named `name` in a sim trace, with their args member `key`. */
static int sim_events(const cJSON *root, const char *name, const char *key, int64_t *vals, int max)
{
    int n = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents"))
    {
        const cJSON *nm = cJSON_GetObjectItem(ev, "name");
        if (cJSON_IsString(nm) && strcmp(nm->valuestring, name) == 0 && n < max) {
            vals[n++] =
                (int64_t)cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), key)->valuedouble;
        }
    }
    return n;
}

/* The one trace of `worker` in dir (its name into name), parsed; its
 * length into *len when len is not NULL. */
static cJSON *sim_trace(const char *dir, const char *worker, char *name, size_t nlen, long *len)
{
    assert_true(trace_named(dir, worker, name, nlen));
    char *text = slurp(dir, name, len);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    free(text);
    return root;
}

static void test_backends_sim_one_file_per_span(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_sim();
    int64_t v[8];
    long len;

    assert_string_equal(b->name, "sim");
    assert_int_equal(b->flags, 0);
    snprintf(f->settings, sizeof(f->settings), "{\"bytes\":20000}");
    assert_int_equal(start(f, b), 0);
    assert_true(exists(f->dir, "trace-p0.json.part"));
    assert_false(exists(f->dir, "trace-p0.json"));
    f->cap.step = 6;
    assert_int_equal(stop(f, b), 0);
    assert_string_equal(f->reason, "");
    assert_false(exists(f->dir, "trace-p0.json.part"));
    assert_int_equal(count_entries(f->dir), 1);

    /* no marker file (no engine here): the worker is named from the capture */
    char name[256];
    cJSON *root = sim_trace(f->dir, "rank3-rollout-generate", name, sizeof(name), &len);
    /* padded up to the size asked, within one event and the trailer */
    assert_in_range(len, 20000 - 40, 20000 + 160);
    assert_int_equal(sim_events(root, "profd_step", "step", v, 8), 2);
    assert_int_equal(v[0], 5);
    assert_int_equal(v[1], 6);
    /* no schedule: no sub-step events */
    assert_int_equal(sim_events(root, "profd_substep", "substep", v, 8), 0);
    cJSON_Delete(root);
}

static void test_backends_sim_schedule_span(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_sim();
    int64_t v[8];

    f->cap.schedule.wait = 2;
    f->cap.schedule.active = 2;
    f->cap.part = 1;
    f->cap.substep = 2;
    assert_int_equal(start(f, b), 0);
    f->cap.substep = 4; /* one past the last recorded */
    /* the markers libprofd wrote for the span go into the trace */
    char path[600], name[256];
    snprintf(path, sizeof(path), "%s/profd-markers-p1.json", f->dir);
    FILE *mf = fopen(path, "w");
    assert_non_null(mf);
    fputs("{\"traceEvents\":[\n"
          "{\"name\":\"ProfilerStep#5\",\"ph\":\"X\",\"cat\":\"profd\",\"ts\":10,\"dur\":5,"
          "\"pid\":1,\"tid\":0,\"args\":{\"step\":5,\"profd_mono_us\":10}},\n"
          "{\"name\":\"rollout.generate\",\"ph\":\"X\",\"cat\":\"profd\",\"ts\":11,\"dur\":2,"
          "\"pid\":1,\"tid\":0,\"args\":{\"step\":5,\"phase\":\"generate\",\"profd_mono_us\":11}}"
          "\n],\"otherData\":{\"profd\":{\"version\":1,\"worker\":\"rank3-rollout-generate\"}}}\n",
          mf);
    fclose(mf);
    assert_int_equal(stop(f, b), 0);
    assert_false(exists(f->dir, "profd-markers-p1.json"));
    cJSON *root = sim_trace(f->dir, "rank3-rollout-generate", name, sizeof(name), NULL);
    assert_int_equal(sim_events(root, "profd_substep", "substep", v, 8), 2);
    assert_int_equal(v[0], 2);
    assert_int_equal(v[1], 3);
    assert_int_equal(sim_events(root, "profd_step", "step", v, 8), 1);
    assert_int_equal(v[0], 5);
    assert_int_equal(sim_events(root, "ProfilerStep#5", "profd_mono_us", v, 8), 1);
    assert_int_equal(v[0], 10);
    assert_int_equal(sim_events(root, "rollout.generate", "step", v, 8), 1);
    cJSON_Delete(root);
    /* the default size is 64 KiB */
    long len;
    free(slurp(f->dir, name, &len));
    assert_in_range(len, 65536 - 40, 65536 + 160);
}

static void test_backends_sim_failures(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_sim();
    char want[1024], missing[512];

    /* stop without start: nothing to finish */
    assert_int_equal(stop(f, b), PROFD_EBACKEND);
    snprintf(want, sizeof(want),
             "sim: cannot open %s/trace-p0.json.part: No such file or directory", f->dir);
    assert_string_equal(f->reason, want);

    /* a .part that is not the sim's */
    char path[512];
    snprintf(path, sizeof(path), "%s/trace-p0.json.part", f->dir);
    FILE *fp = fopen(path, "w");
    fputs("{\"traceEvents\":[]}\n", fp);
    fclose(fp);
    assert_int_equal(stop(f, b), PROFD_EBACKEND);
    snprintf(want, sizeof(want), "sim: %s has no valid header", path);
    assert_string_equal(f->reason, want);

    /* start twice: the span is already open */
    assert_int_equal(start(f, b), PROFD_EBACKEND);
    snprintf(want, sizeof(want), "sim: cannot create %s: File exists", path);
    assert_string_equal(f->reason, want);

    /* no folder */
    snprintf(missing, sizeof(missing), "%s/gone", f->dir);
    f->cap.dir = missing;
    assert_int_equal(start(f, b), PROFD_EBACKEND);
    snprintf(want, sizeof(want),
             "sim: cannot create %s/trace-p0.json.part: No such file or directory", missing);
    assert_string_equal(f->reason, want);
}

/* ---- exec ---- */

/* Wait for the exec commands of the fixture's folder to end: their outcome
 * (0 or the first failure, its reason in f->reason), as the background
 * thread would take it before sending the capture's result. */
static int settle(fixture_t *f)
{
    int64_t t0 = mono_ms();
    int rv;
    while ((rv = cl_exec_outcome(f->cap.dir, f->reason, sizeof(f->reason))) == 1) {
        if (mono_ms() - t0 > 10000) {
            fail_msg("exec commands still running after 10 s");
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return rv;
}

static void test_backends_exec_variables(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();
    char want[4096];

    assert_string_equal(b->name, "exec");
    /* the worker's own PROFD_* settings do not leak into the command */
    setenv("PROFD_URL", "ipc:///nowhere/worker.sock", 1);
    setenv("PROFD_TEST_MARKER", "leaked", 1);
    snprintf(f->settings, sizeof(f->settings),
             "{\"start_cmd\":\"env | grep ^PROFD_ | sort > env-$PROFD_EVENT.txt\","
             "\"stop_cmd\":\"env | grep ^PROFD_ | sort > env-$PROFD_EVENT.txt\"}");
    f->cap.part = 2;
    assert_int_equal(start(f, b), 0);
    f->cap.step = 6;
    f->cap.substep = 9;
    assert_int_equal(stop(f, b), 0);
    unsetenv("PROFD_URL");
    unsetenv("PROFD_TEST_MARKER");
    assert_int_equal(settle(f), 0);

    const char *events[] = {"start", "stop"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof(name), "env-%s.txt", events[i]);
        char *got = slurp(f->dir, name, NULL);
        assert_non_null(got);
        snprintf(want, sizeof(want),
                 "PROFD_DIR=%s\n"
                 "PROFD_EVENT=%s\n"
                 "PROFD_FIRST_STEP=5\n"
                 "PROFD_JOB=run-42\n"
                 "PROFD_LAST_STEP=6\n"
                 "PROFD_PART=2\n"
                 "PROFD_PHASE=generate\n"
                 "PROFD_PID=%ld\n"
                 "PROFD_RANK=3\n"
                 "PROFD_REPLICA_RANK=1\n"
                 "PROFD_ROLE=rollout\n"
                 "PROFD_STEP=%d\n"
                 "PROFD_TOOL=sim\n"
                 "PROFD_WINDOW=w7-steps5-6\n",
                 f->dir, events[i], (long)getpid(), i == 0 ? 5 : 6);
        assert_string_equal(got, want);
        free(got);
    }
}

static void test_backends_exec_placeholders(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();
    char want[4096];

    f->cap.phase = NULL; /* end-to-end: an empty {phase} */
    f->cap.role = "e2e";
    f->cap.last_step = -1;
    snprintf(f->settings, sizeof(f->settings),
             "{\"start_cmd\":\"printf '%%s|' {pid} {rank} {replica_rank} {role} x{phase}x {job} "
             "{window} {tool} {step} {first_step} {last_step} {part} {event} {dir} '{unknown}' "
             "'{pid' > tpl.txt; echo a b | awk '{print $2}' >> tpl.txt\"}");
    assert_int_equal(start(f, b), 0);
    assert_int_equal(settle(f), 0);
    char *got = slurp(f->dir, "tpl.txt", NULL);
    assert_non_null(got);
    snprintf(want, sizeof(want),
             "%ld|3|1|e2e|xx|run-42|w7-steps5-6|sim|5|5|-1|0|start|%s|{unknown}|{pid|b\n",
             (long)getpid(), f->dir);
    assert_string_equal(got, want);
    free(got);
}

static void test_backends_exec_working_folder_and_noop(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();
    char real[PATH_MAX], want[PATH_MAX + 2];

    /* no command at a boundary: nothing runs, nothing fails */
    assert_int_equal(start(f, b), 0);
    assert_int_equal(stop(f, b), 0);
    assert_int_equal(count_entries(f->dir), 0);

    snprintf(f->settings, sizeof(f->settings), "{\"stop_cmd\":\"pwd -P > cwd.txt\"}");
    assert_int_equal(start(f, b), 0);
    assert_int_equal(count_entries(f->dir), 0);
    assert_int_equal(stop(f, b), 0);
    assert_int_equal(settle(f), 0);
    char *got = slurp(f->dir, "cwd.txt", NULL);
    assert_non_null(realpath(f->dir, real));
    snprintf(want, sizeof(want), "%s\n", real);
    assert_string_equal(got, want);
    free(got);
}

static void test_backends_exec_exit_status(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();

    /* the training thread only spawns: the failure comes with the result */
    snprintf(f->settings, sizeof(f->settings), "{\"start_cmd\":\"exit 3\"}");
    assert_int_equal(start(f, b), 0);
    assert_int_equal(settle(f), PROFD_EBACKEND);
    assert_string_equal(f->reason, "exec: start_cmd exited with status 3");
    assert_int_equal(settle(f), 0); /* told once */
    snprintf(f->settings, sizeof(f->settings), "{\"stop_cmd\":\"kill -KILL $$\"}");
    assert_int_equal(stop(f, b), 0);
    assert_int_equal(settle(f), PROFD_EBACKEND);
    assert_string_equal(f->reason, "exec: stop_cmd exited with signal 9");
}

static void test_backends_exec_timeout_kills_the_group(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();

    snprintf(f->settings, sizeof(f->settings),
             "{\"start_cmd\":\"(sleep 1; touch late.txt) & sleep 30\",\"timeout_ms\":200}");
    int64_t t0 = mono_ms();
    assert_int_equal(start(f, b), 0);
    assert_int_equal(settle(f), PROFD_ETIMEDOUT);
    int64_t took = mono_ms() - t0;
    assert_string_equal(f->reason, "exec: start_cmd did not finish within 200 ms");
    assert_in_range(took, 200, 5000); /* not the 30 s of the command (a loaded machine is slow) */
    /* the background part of the command went with it */
    struct timespec ts = {1, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    assert_false(exists(f->dir, "late.txt"));
}

/* A slow command does not hold the training thread (the backend's start and
 * stop run there, inside the step call): they return once it is spawned; the
 * stop command waits its turn behind the start command, off that thread. */
static void test_backends_exec_does_not_block_the_step(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();

    snprintf(f->settings, sizeof(f->settings),
             "{\"start_cmd\":\"sleep 2; touch started.txt\",\"stop_cmd\":\"test -e "
             "started.txt && touch stopped.txt\"}");
    int64_t t0 = mono_ms();
    assert_int_equal(start(f, b), 0);
    int64_t took = mono_ms() - t0;
    if (took > 300) {
        fail_msg("the exec backend's start took %lld ms for a command sleeping 2 s",
                 (long long)took);
    }
    char why[256];
    assert_int_equal(cl_exec_outcome(f->cap.dir, why, sizeof(why)), 1); /* still running */
    t0 = mono_ms();
    assert_int_equal(stop(f, b), 0);
    took = mono_ms() - t0;
    if (took > 300) {
        fail_msg("the exec backend's stop took %lld ms", (long long)took);
    }
    assert_false(exists(f->dir, "stopped.txt"));
    assert_int_equal(settle(f), 0);
    assert_true(exists(f->dir, "started.txt"));
    assert_true(exists(f->dir, "stopped.txt")); /* after the start command */
}

static void test_backends_exec_refuses_unsafe_values(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();
    char spaced[512];

    snprintf(spaced, sizeof(spaced), "%s/cap dir", f->dir);
    assert_int_equal(mkdir(spaced, 0755), 0);
    f->cap.dir = spaced;
    snprintf(f->settings, sizeof(f->settings), "{\"start_cmd\":\"touch {dir}/ran.txt\"}");
    assert_int_equal(start(f, b), PROFD_EINVAL);
    assert_string_equal(f->reason,
                        "exec: {dir} in start_cmd holds characters the shell would interpret; "
                        "use \"$PROFD_DIR\"");
    assert_int_equal(count_entries(spaced), 0);
    /* the variable carries the same value safely */
    snprintf(f->settings, sizeof(f->settings),
             "{\"start_cmd\":\"touch \\\"$PROFD_DIR/ran.txt\\\"\"}");
    assert_int_equal(start(f, b), 0);
    assert_int_equal(settle(f), 0);
    assert_true(exists(spaced, "ran.txt"));
}

static void test_backends_exec_too_long(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_exec();

    int n = snprintf(f->settings, sizeof(f->settings), "{\"start_cmd\":\"touch ran.txt; true");
    for (int i = 0; i < 4100; i++) {
        f->settings[n++] = ' ';
    }
    snprintf(f->settings + n, sizeof(f->settings) - (size_t)n, "\"}");
    assert_int_equal(start(f, b), PROFD_EINVAL);
    assert_string_equal(f->reason, "exec: start_cmd longer than 4095 bytes");

    /* short enough, but not once expanded */
    n = snprintf(f->settings, sizeof(f->settings), "{\"start_cmd\":\"touch ran.txt; true ");
    for (int i = 0; i < 300; i++) {
        n += snprintf(f->settings + n, sizeof(f->settings) - (size_t)n, "{dir}");
    }
    snprintf(f->settings + n, sizeof(f->settings) - (size_t)n, "\"}");
    assert_int_equal(start(f, b), PROFD_EINVAL);
    assert_string_equal(f->reason, "exec: start_cmd longer than 4095 bytes once expanded");
    assert_false(exists(f->dir, "ran.txt"));
}

/* ---- cuda ---- */

static void test_backends_cuda_missing_library(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_cuda();
    const char *prefix = "cuda: cannot load /nonexistent/libcudart.so: ";

    assert_string_equal(b->name, "cuda");
    snprintf(f->settings, sizeof(f->settings), "{\"library\":\"/nonexistent/libcudart.so\"}");
    assert_int_equal(start(f, b), PROFD_ENOTSUP);
    assert_memory_equal(f->reason, prefix, strlen(prefix));
    assert_non_null(strstr(f->reason, "No such file or directory"));
    assert_int_equal(stop(f, b), PROFD_ENOTSUP);
    assert_memory_equal(f->reason, prefix, strlen(prefix));
}

/* The default search: no runtime, a runtime without a device, or a GPU. */
static void test_backends_cuda_system_runtime(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_cuda();
    const char *none = "cuda: CUDA runtime not found (";
    const char *nodev = "cuda: cudaProfilerStart returned error ";

    void *h = dlopen("libcudart.so", RTLD_NOW | RTLD_LOCAL);
    int rv = start(f, b);
    if (h == NULL) {
        assert_int_equal(rv, PROFD_ENOTSUP);
        assert_memory_equal(f->reason, none, strlen(none));
        assert_int_equal(f->reason[strlen(f->reason) - 1], ')');
        return;
    }
    dlclose(h);
    int (*count)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaGetDeviceCount");
    int devices = 0;
    if (count == NULL || count(&devices) != 0 || devices == 0) {
        assert_int_equal(rv, PROFD_EBACKEND); /* e.g. 100, cudaErrorNoDevice */
        assert_memory_equal(f->reason, nodev, strlen(nodev));
        assert_true(atoi(f->reason + strlen(nodev)) > 0);
        return;
    }
    assert_int_equal(rv, 0);
    assert_int_equal(stop(f, b), 0);
}

static void test_backends_cuda_missing_symbol(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_cuda();

    snprintf(f->settings, sizeof(f->settings), "{\"library\":\"libm.so.6\"}");
    assert_int_equal(start(f, b), PROFD_ENOTSUP);
    assert_string_equal(f->reason, "cuda: cudaProfilerStart not found in the CUDA runtime");
}

static void test_backends_cuda_fake_runtime(void **state)
{
    fixture_t *f = *state;
    const profd_backend_t *b = profd_backend_cuda();

    snprintf(f->settings, sizeof(f->settings), "{\"library\":\"%s\"}", FAKE_CUDART);
    unsetenv("FAKE_CUDART_ERROR");
    assert_int_equal(start(f, b), 0);
    assert_int_equal(stop(f, b), 0);
    void *h = dlopen(FAKE_CUDART, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    int *starts = dlsym(h, "fake_cudart_starts");
    int *stops = dlsym(h, "fake_cudart_stops");
    assert_int_equal(*starts, 1);
    assert_int_equal(*stops, 1);

    setenv("FAKE_CUDART_ERROR", "4", 1);
    assert_int_equal(start(f, b), PROFD_EBACKEND);
    assert_string_equal(f->reason, "cuda: cudaProfilerStart returned error 4");
    assert_int_equal(stop(f, b), PROFD_EBACKEND);
    assert_string_equal(f->reason, "cuda: cudaProfilerStop returned error 4");
    unsetenv("FAKE_CUDART_ERROR");
    assert_int_equal(*starts, 2);
    assert_int_equal(*stops, 2);
    /* nothing is written into the capture folder: nsys owns the output */
    assert_int_equal(count_entries(f->dir), 0);
    dlclose(h);
}

int main(void)
{
    return PD_RUN_EACH(
        setup, teardown, test_backends_sim_one_file_per_span, test_backends_sim_schedule_span,
        test_backends_sim_failures, test_backends_exec_variables, test_backends_exec_placeholders,
        test_backends_exec_working_folder_and_noop, test_backends_exec_exit_status,
        test_backends_exec_timeout_kills_the_group, test_backends_exec_does_not_block_the_step,
        test_backends_exec_refuses_unsafe_values, test_backends_exec_too_long,
        test_backends_cuda_missing_library, test_backends_cuda_system_runtime,
        test_backends_cuda_missing_symbol, test_backends_cuda_fake_runtime);
}
