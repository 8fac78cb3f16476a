// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The `sim` backend: writes a synthetic Chrome-trace JSON file per recorded
 * span, of the size asked in settings "bytes" (default 64 KiB), for tests,
 * the demo and benchmarks. Stateless: start() writes the file's header into
 * trace-p<part>.json.part (which records where the span began), stop() reads
 * it back, appends the step and phase markers libprofd wrote for the span
 * (profd-markers-p<part>.json, engine.h: moved into the trace, the file
 * removed), one event per step and sub-step covered and padding events up
 * to the size, and renames the file to <worker>.<ms>.pt.trace.json (the
 * worker "rank<R>-<role>[-<phase>]", ms the wall clock: TensorBoard's
 * naming). Times are CLOCK_MONOTONIC microseconds, the markers' clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "profd/client.h"
#include "profd/proto.h"

#define SIM_DEFAULT_BYTES (64 * 1024)
#define SIM_MAX_BYTES     (64LL << 30)

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* The markers of the span: their events appended to f (each line of the
 * file that is an event), the worker's name into `worker`; the file goes.
 * Returns the bytes written. */
static long take_markers(const profd_capture_t *cap, FILE *f, char *worker, size_t wlen)
{
    char path[PP_MAX_PATH + 64], line[2048];
    long written = 0;
    int n = snprintf(path, sizeof(path), "%s/profd-markers-p%" PRId64 ".json", cap->dir, cap->part);
    FILE *m = n > 0 && (size_t)n < sizeof(path) ? fopen(path, "r") : NULL;
    if (m == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), m)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') {
            line[--len] = '\0';
        }
        if (len && line[len - 1] == ',') {
            line[--len] = '\0';
        }
        if (strncmp(line, "{\"name\":", 8) == 0) {
            written += fprintf(f, "%s,\n", line);
        }
        const char *w = strstr(line, "\"worker\":\"");
        if (w) {
            w += 10;
            size_t k = strcspn(w, "\"");
            if (k > 0 && k < wlen) {
                memcpy(worker, w, k);
                worker[k] = '\0';
            }
        }
    }
    fclose(m);
    unlink(path);
    return written;
}

static int part_path(const profd_capture_t *cap, char *buf, size_t len, bool part)
{
    int n = snprintf(buf, len, "%s/trace-p%" PRId64 ".json%s", cap->dir, cap->part,
                     part ? ".part" : "");
    return (n < 0 || (size_t)n >= len) ? PROFD_EINVAL : 0;
}

static int fail(char *reason, size_t len, const char *what, const char *path)
{
    snprintf(reason, len, "sim: %s %s: %s", what, path, strerror(errno));
    return PROFD_EBACKEND;
}

/* The capture's .part file (its path into path, PP_MAX_PATH bytes) opened
 * with mode; NULL with *rv and reason set when it cannot be (`what` the
 * failure's verb). */
static FILE *open_part(const profd_capture_t *cap, char *path, const char *mode, const char *what,
                       char *reason, size_t reason_len, int *rv)
{
    FILE *f = NULL;
    if (part_path(cap, path, PP_MAX_PATH, true) != 0) {
        snprintf(reason, reason_len, "sim: output path too long");
        *rv = PROFD_EINVAL;
    } else if ((f = fopen(path, mode)) == NULL) {
        *rv = fail(reason, reason_len, what, path);
    }
    return f;
}

static int sim_start(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    char path[PP_MAX_PATH];
    int rv;
    FILE *f = open_part(cap, path, "wx", "cannot create", reason, reason_len, &rv);
    if (f == NULL) {
        return rv;
    }
    /* the first line is read back by stop(): keep its layout */
    fprintf(f,
            "{\"otherData\":{\"profd_sim\":1,\"start_step\":%" PRId64 ",\"start_substep\":%" PRId64
            ",\"start_us\":%" PRId64 "},\n\"traceEvents\":[\n",
            cap->step, cap->substep, mono_us());
    if (fclose(f) != 0) {
        return fail(reason, reason_len, "cannot write", path);
    }
    return 0;
}

static int sim_stop(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    char path[PP_MAX_PATH], final[PP_MAX_PATH], head[256] = "";
    long long s0 = 0, k0 = 0, t0 = 0;
    int rv;

    FILE *f = open_part(cap, path, "r+", "cannot open", reason, reason_len, &rv);
    if (f == NULL) {
        return rv;
    }
    if (fgets(head, sizeof(head), f) == NULL ||
        sscanf(head,
               "{\"otherData\":{\"profd_sim\":1,\"start_step\":%lld,\"start_substep\":%lld,"
               "\"start_us\":%lld}",
               &s0, &k0, &t0) != 3) {
        fclose(f);
        snprintf(reason, reason_len, "sim: %s has no valid header", path);
        return PROFD_EBACKEND;
    }
    fseek(f, 0, SEEK_END);

    int64_t bytes = pp_json_get_i64(cap->settings_json, "bytes", SIM_DEFAULT_BYTES);
    if (bytes < 0 || bytes > SIM_MAX_BYTES) {
        bytes = SIM_DEFAULT_BYTES;
    }
    int64_t t1 = mono_us();
    int64_t pid = (int64_t)getpid();
    const char *phase = cap->phase ? cap->phase : "step";
    char worker[PP_MAX_NAME * 2 + 16];
    snprintf(worker, sizeof(worker), "rank%" PRId64 "-%s%s%s", cap->rank, cap->role,
             cap->phase ? "-" : "", cap->phase ? cap->phase : "");
    long written = ftell(f) + take_markers(cap, f, worker, sizeof(worker));
    bool first = true;
    int64_t ts = t0;

    /* what was covered: steps s0..step, sub-steps k0..substep-1 */
    for (int64_t s = s0; s <= cap->step; s++) {
        written += fprintf(f,
                           "%s{\"name\":\"profd_step\",\"ph\":\"X\",\"ts\":%" PRId64
                           ",\"dur\":1,\"pid\":%" PRId64 ",\"tid\":%" PRId64
                           ",\"args\":{\"step\":%" PRId64 ",\"phase\":\"%s\"}}",
                           first ? "" : ",\n", ts++, pid, cap->rank, s, phase);
        first = false;
    }
    if (cap->schedule.active > 0) {
        for (int64_t k = k0; k < cap->substep; k++) {
            written += fprintf(f,
                               ",\n{\"name\":\"profd_substep\",\"ph\":\"X\",\"ts\":%" PRId64
                               ",\"dur\":1,\"pid\":%" PRId64 ",\"tid\":%" PRId64
                               ",\"args\":{\"step\":%" PRId64 ",\"substep\":%" PRId64 "}}",
                               ts++, pid, cap->rank, cap->step, k);
        }
    }
    /* padding: synthetic operator events up to the requested size */
    int64_t i = 0;
    while (written + 40 < bytes) {
        written += fprintf(f,
                           ",\n{\"name\":\"sim_op_%" PRId64 "\",\"ph\":\"X\",\"ts\":%" PRId64
                           ",\"dur\":%" PRId64 ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 "}",
                           i % 97, ts + i, (i % 13) + 1, pid, cap->rank);
        i++;
    }
    written += fprintf(f, "\n],\"displayTimeUnit\":\"ms\",\"profd_end_us\":%" PRId64 "}\n", t1);
    if (ferror(f) || fclose(f) != 0) {
        return fail(reason, reason_len, "cannot write", path);
    }
    /* TensorBoard's name: <worker>.<ms>.pt.trace.json, a new one per span */
    for (int64_t ms = wall_ms();; ms++) {
        int n =
            snprintf(final, sizeof(final), "%s/%s.%" PRId64 ".pt.trace.json", cap->dir, worker, ms);
        if (n < 0 || (size_t)n >= sizeof(final)) {
            snprintf(reason, reason_len, "sim: output path too long");
            return PROFD_EINVAL;
        }
        if (access(final, F_OK) != 0) {
            break;
        }
    }
    if (rename(path, final) != 0) {
        return fail(reason, reason_len, "cannot rename", path);
    }
    return 0;
}

const profd_backend_t *profd_backend_sim(void)
{
    static const profd_backend_t b = {.name = "sim", .start = sim_start, .stop = sim_stop};
    return &b;
}
