// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Probe: how fast is the machine right now? Two figures that time nothing
 * of profd, taken before every figure group so that two runs of the bench
 * can tell the machine's own drift (a shared host, a neighbour's load)
 * from a change in profd:
 *
 *   cpu_ms   a fixed chain of dependent integer operations (2^24 rounds
 *            of xorshift and a multiply: no vectorising, no memory), the
 *            speed of one core;
 *   mem_ns   one load that misses the caches: a chase of dependent loads
 *            through a random cycle over 64 MiB (a neighbour sharing the
 *            last-level cache or the memory bus slows it);
 *   switch_us  one round trip between two threads on the same CPU over
 *            two pipes (a write wakes the other thread, which writes
 *            back), the median of one repetition's round trips: the cost
 *            of two switches;
 *   wake_us  the same between two threads pinned to two CPUs: the
 *            wake-up of a sleeping CPU, what every hand-off between nng's
 *            threads, the loop and the clients pays on an idle machine
 *            (on this project's VMs 35-60 us against 5 us for a switch,
 *            and the part of the machine that drifts most between runs).
 *
 * usage: bench_probe [--reps R] [--trips N]
 * Prints one JSON object: {"cpu_ms": [R values], "mem_ns": [R values],
 * "switch_us": [R values], "wake_us": [R values]}.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "bench_util.h"

#define CPU_ROUNDS  (1u << 24)
#define MAX_TRIPS   100000
#define CHASE_N     (16u << 20) /* uint32_t slots: 64 MiB */
#define CHASE_LOADS (1u << 21)

static double cpu_once(void)
{
    volatile uint64_t sink;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < CPU_ROUNDS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x *= 0x2545f4914f6cdd1dull;
    }
    sink = x;
    (void)sink;
    return (double)(bench_now_ns() - t0) / 1e6;
}

/* A random cycle through all CHASE_N slots (Sattolo's algorithm, a fixed
 * seed): each slot holds the index of the next. */
static uint32_t *chase_make(void)
{
    uint32_t *a = malloc(sizeof(*a) * CHASE_N);
    if (a == NULL) {
        bench_die("out of memory");
    }
    for (uint32_t i = 0; i < CHASE_N; i++) {
        a[i] = i;
    }
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = CHASE_N - 1; i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint32_t j = (uint32_t)(x % i); /* j < i: one cycle */
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    return a;
}

static double mem_once(const uint32_t *a)
{
    volatile uint32_t sink;
    uint32_t k = 0;
    int64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < CHASE_LOADS; i++) {
        k = a[k];
    }
    sink = k;
    (void)sink;
    return (double)(bench_now_ns() - t0) / CHASE_LOADS;
}

typedef struct pingpong {
    int to_echo[2], to_main[2];
    int trips, cpu;
} pingpong_t;

/* The calling thread onto one CPU (cpu < 0: any). */
static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) {
        for (int i = 0; i < CPU_SETSIZE; i++) {
            CPU_SET(i, &set);
        }
    } else {
        CPU_SET(cpu, &set);
    }
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *echo_main(void *arg)
{
    pingpong_t *p = arg;
    char b;
    pin(p->cpu);
    for (int i = 0; i < p->trips; i++) {
        if (read(p->to_echo[0], &b, 1) != 1 || write(p->to_main[1], &b, 1) != 1) {
            break;
        }
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double wake_once(int trips, int64_t *rtt, int here, int there)
{
    pingpong_t p = {.trips = trips, .cpu = there};
    pin(here);
    pthread_t t;
    if (pipe(p.to_echo) != 0 || pipe(p.to_main) != 0) {
        bench_die("pipe: %s", strerror(errno));
    }
    if (pthread_create(&t, NULL, echo_main, &p) != 0) {
        bench_die("pthread_create failed");
    }
    char b = 'p';
    for (int i = 0; i < trips; i++) {
        int64_t t0 = bench_now_ns();
        if (write(p.to_echo[1], &b, 1) != 1 || read(p.to_main[0], &b, 1) != 1) {
            bench_die("pipe round trip: %s", strerror(errno));
        }
        rtt[i] = bench_now_ns() - t0;
    }
    pthread_join(t, NULL);
    close(p.to_echo[0]);
    close(p.to_echo[1]);
    close(p.to_main[0]);
    close(p.to_main[1]);
    pin(-1);
    qsort(rtt, (size_t)trips, sizeof(*rtt), cmp_i64);
    return (double)rtt[trips / 2] / 1e3;
}

int main(int argc, char **argv)
{
    int reps = 5, trips = 2000;
    const bench_opt_t opts[] = {{"--reps", BENCH_INT, &reps}, {"--trips", BENCH_INT, &trips}};
    bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
               "bench_probe [--reps R] [--trips N]");
    if (reps < 1 || reps > 100 || trips < 1 || trips > MAX_TRIPS) {
        bench_die("--reps 1..100, --trips 1..%d", MAX_TRIPS);
    }
    int64_t *rtt = malloc(sizeof(*rtt) * (size_t)trips);
    if (rtt == NULL) {
        bench_die("out of memory");
    }
    printf("{\"cpu_ms\": [");
    for (int i = 0; i < reps; i++) {
        printf("%s%.3f", i ? ", " : "", cpu_once());
    }
    uint32_t *chase = chase_make();
    printf("], \"mem_ns\": [");
    for (int i = 0; i < reps; i++) {
        printf("%s%.3f", i ? ", " : "", mem_once(chase));
    }
    free(chase);
    printf("], \"switch_us\": [");
    for (int i = 0; i < reps; i++) {
        printf("%s%.3f", i ? ", " : "", wake_once(trips, rtt, 0, 0));
    }
    printf("], \"wake_us\": [");
    for (int i = 0; i < reps; i++) {
        printf("%s%.3f", i ? ", " : "", wake_once(trips, rtt, 0, 1));
    }
    printf("]}\n");
    free(rtt);
    return 0;
}
