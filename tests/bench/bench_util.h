// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Helpers shared by the benchmark programs: a monotonic clock in
 * nanoseconds, one control request over nng, and stats-based waits.
 * Header-only: each benchmark is one translation unit plus this.
 */
#ifndef PROFD_BENCH_UTIL_H
#define PROFD_BENCH_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "profd/client.h"

static inline int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void bench_sleep_us(int64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static inline void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* The benchmarks' options: "--name VALUE" each, into a string, an int, an
 * int64_t or a double; an unknown option or a missing value dies with the
 * usage line. */
typedef enum { BENCH_STR, BENCH_INT, BENCH_I64, BENCH_DBL } bench_kind_t;
typedef struct bench_opt {
    const char *name; /* "--url" */
    bench_kind_t kind;
    void *out;
} bench_opt_t;

/* One option's value v into out, read as kind says. */
static inline void bench_set(bench_kind_t kind, void *out, const char *v)
{
    switch (kind) {
    case BENCH_STR:
        *(const char **)out = v;
        break;
    case BENCH_INT:
        *(int *)out = atoi(v);
        break;
    case BENCH_I64:
        *(int64_t *)out = atoll(v);
        break;
    case BENCH_DBL:
        *(double *)out = atof(v);
        break;
    }
}

static inline void bench_args(int argc, char **argv, const bench_opt_t *opts, size_t n,
                              const char *usage)
{
    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < n && strcmp(argv[i], opts[k].name) != 0) {
            k++;
        }
        if (k == n || i + 1 >= argc) {
            bench_die("usage: %s", usage);
        }
        bench_set(opts[k].kind, opts[k].out, argv[++i]);
    }
}

/* Options for a client of the benchmarks' job "bench" at url: its role and
 * rank (PROFD_FROM_ENV: RANK's), the rest as profd_options_init sets them. */
static inline void bench_options(profd_options_t *o, const char *url, const char *role,
                                 int64_t rank)
{
    profd_options_init(o);
    o->url = url;
    o->job = "bench";
    o->role = role;
    o->rank = rank;
}

/* Forks n client processes: client i runs child(arg, i, out), out the write
 * end of one pipe they share, and exits with what child returns. Their pids
 * into pids; returns the pipe's read end, the parent's. */
static inline int bench_fork_clients(int n, pid_t *pids, int (*child)(const void *, int, int),
                                     const void *arg)
{
    int fds[2];
    if (pipe(fds) != 0) {
        bench_die("pipe: %s", strerror(errno));
    }
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            _exit(child(arg, i, fds[1]));
        }
        if (pid < 0) {
            bench_die("fork: %s", strerror(errno));
        }
        pids[i] = pid;
    }
    close(fds[1]);
    return fds[0];
}

/* A REQ socket dialed to a control endpoint (as profctl dials it). */
static inline int bench_control_open(nng_socket *s, const char *url)
{
    if (nng_req0_open(s) != 0) {
        return -1;
    }
    nng_socket_set_ms(*s, NNG_OPT_RECVTIMEO, 10000);
    nng_socket_set_ms(*s, NNG_OPT_SENDTIMEO, 10000);
    if (nng_dial(*s, url, NULL, 0) != 0) {
        nng_close(*s);
        return -1;
    }
    return 0;
}

/* One control request (a JSON document) and its reply on a dialed socket.
 * Returns the reply (malloc'ed, NUL-terminated) or NULL. */
static inline char *bench_request(nng_socket s, const char *json)
{
    char *buf = NULL, *out = NULL;
    size_t len = 0;
    if (nng_send(s, (void *)json, strlen(json), 0) == 0 &&
        nng_recv(s, &buf, &len, NNG_FLAG_ALLOC) == 0) {
        if ((out = malloc(len + 1)) != NULL) {
            memcpy(out, buf, len);
            out[len] = '\0';
        }
        nng_free(buf, len);
    }
    return out;
}

/* The same on a connection of its own, as one profctl command. */
static inline char *bench_control(const char *url, const char *json)
{
    nng_socket s;
    char *out;
    if (bench_control_open(&s, url) != 0) {
        return NULL;
    }
    out = bench_request(s, json);
    nng_close(s);
    return out;
}

/* The integer after the first `"key":` in a JSON text (whitespace allowed),
 * or `def`. Enough for the flat replies the benchmarks read. */
static inline int64_t bench_json_i64(const char *text, const char *key, int64_t def)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *p = text ? strstr(text, pat) : NULL;
    if (p == NULL) {
        return def;
    }
    p += strlen(pat);
    while (*p == ' ' || *p == '\t' || *p == '\n') {
        p++;
    }
    return strtoll(p, NULL, 10);
}

/* Wait until the background thread delivered (or dropped) every event the
 * training thread pushed: the ring is empty again. */
static inline int bench_wait_drained(profd_client_t *c, int64_t pushed, int64_t timeout_ms)
{
    int64_t deadline = bench_now_ns() + timeout_ms * 1000000;
    profd_stats_t st;
    do {
        profd_stats(c, &st);
        if (st.events_sent + st.events_dropped >= pushed) {
            return 0;
        }
        bench_sleep_us(200);
    } while (bench_now_ns() < deadline);
    return -1;
}

static inline int bench_wait_connected(profd_client_t *c, int64_t timeout_ms)
{
    int64_t deadline = bench_now_ns() + timeout_ms * 1000000;
    profd_stats_t st;
    do {
        profd_stats(c, &st);
        if (st.connected) {
            return 0;
        }
        bench_sleep_us(1000);
    } while (bench_now_ns() < deadline);
    return -1;
}

#endif
