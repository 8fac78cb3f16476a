// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profd-sim: a simulated multi-rank RL job built on libprofd. Spawns one
 * worker process per rank with a role layout (actor, rollout in inference
 * replicas, ref, critic, ...), steps at a given rate through the phases of
 * its role with sub-steps, and writes synthetic Chrome traces of a chosen
 * size through the `sim` backend when a window selects it. Drives the demo,
 * the system tests and the benchmarks.
 *
 * --threads runs the ranks as threads of one process instead (each with its
 * own client and training thread), so that a thousand ranks fit on a few
 * cores; with --ranks-per-thread K one training thread drives K ranks in
 * turn (each rank still its own client, with the client's background
 * thread), so that tens of thousands of ranks fit the kernel's task limits.
 * --work replaces the sleeps by a fixed amount of CPU work, and --report
 * prints each rank's step times: the benchmarks' training overhead.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profd/client.h"
#include "profd/proto.h"

#define MAX_GROUPS 16
#define MAX_RANKS  4096

typedef struct group {
    char role[PP_MAX_NAME + 1];
    int count;
    int replicas; /* 0: not replicas */
} group_t;

typedef struct sim {
    const char *url, *job, *host;
    group_t groups[MAX_GROUPS];
    int ngroups, nranks;
    int64_t steps, start_step;
    double rate;
    int substeps;
    int64_t trace_bytes;
    char phases_override[512];
    bool verbose;
    int rank_offset;
    int replica_offset;
    bool threads;
    int ranks_per_thread; /* --threads: ranks driven by one training thread */
    int64_t work;         /* thousands of iterations of CPU work per sub-step; 0: sleep */
    bool report;
    int flush_ms;  /* the client's flush period; 0: the library's default */
    int open_wait; /* ms a training thread waits for a rank to register before the next */
    struct {
        int64_t rank, from;
        double factor;
    } slow[8]; /* --slow RANK:FACTOR[@STEP]: a straggler */
    int nslow;
} sim_t;

/* How many times slower this rank runs this step (--slow). */
static double slowdown(const sim_t *s, int64_t rank, int64_t step)
{
    for (int i = 0; i < s->nslow; i++) {
        if (s->slow[i].rank == rank && step >= s->slow[i].from) {
            return s->slow[i].factor;
        }
    }
    return 1.0;
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profd-sim --layout ROLE:N[@R][,ROLE:N...] [options]\n"
            "\n"
            "Simulates a multi-rank RL training job on libprofd: one process per rank.\n"
            "  --layout L        e.g. actor:4,rollout:4@2,ref:2 (rollout: 4 ranks in 2 replicas);\n"
            "                    global ranks are numbered in layout order\n"
            "  --steps N         steps per worker (default 20)\n"
            "  --start-step S    first step (default 1)\n"
            "  --rate R          steps per second (default 10)\n"
            "  --substeps K      sub-steps per phase: decode steps, micro-batches (default 4)\n"
            "  --phases P,Q      phases of every role (default: by role: rollout generate;\n"
            "                    actor compute_log_prob,update_actor; ref ref_compute_log_prob;\n"
            "                    critic compute_values,update_critic; reward compute_rm_score)\n"
            "  --trace-bytes B   synthetic trace size per capture unless the window's settings\n"
            "                    say \"bytes\" (default 65536)\n"
            "  --job J           job name (default $PROFD_JOB, else default)\n"
            "  --url URL         worker endpoint (default: as libprofd)\n"
            "  --host H          host name reported (default: this host)\n"
            "  --rank-offset N   first global rank (several sims, one job)\n"
            "  --replica-offset N  first replica index (replicas spanning several sims)\n"
            "  --threads         run the ranks as threads of this process (one client and one\n"
            "                    training thread each) instead of one process per rank\n"
            "  --ranks-per-thread K  with --threads: one training thread drives K ranks in turn\n"
            "                    (1 to 4096, default 1); each rank keeps its own client, whose\n"
            "                    background thread is still one per rank\n"
            "  --work N          instead of sleeping, do N thousand iterations of arithmetic per\n"
            "                    sub-step and run the steps back to back (--rate is ignored)\n"
            "  --report          print each rank's step times on exit (median, p10, p90) and\n"
            "                    the longest a profd call took on its training thread (with\n"
            "                    and without a backend call, a trace written, in it)\n"
            "  --slow R:F[@S]    global rank R takes F times as long per step from step S on\n"
            "                    (default: from its first step): a straggler; repeatable\n"
            "  --flush-ms N      the client's event flush period (default: the library's, 50 ms);\n"
            "                    many simulated ranks on few cores: fewer background wakeups\n"
            "  --open-wait MS    a training thread opens its ranks one at a time, each waiting\n"
            "                    up to MS for its client to register before the next opens\n"
            "                    (default 0: all at once); thousands of ranks on few cores:\n"
            "                    no storm of registrations timing out and retrying\n"
            "  --verbose         print the client library's log\n"
            "  --help            this help\n");
}

static int parse_layout(sim_t *s, const char *spec)
{
    char *copy = strdup(spec), *save = NULL;
    s->ngroups = 0;
    s->nranks = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        group_t *g = &s->groups[s->ngroups];
        char *colon = strchr(tok, ':');
        if (s->ngroups == MAX_GROUPS || colon == NULL) {
            free(copy);
            return -1;
        }
        *colon = '\0';
        if (!pp_ident_ok(tok)) {
            free(copy);
            return -1;
        }
        snprintf(g->role, sizeof(g->role), "%s", tok);
        char *at = strchr(colon + 1, '@');
        g->count = atoi(colon + 1);
        g->replicas = at ? atoi(at + 1) : 0;
        if (g->count < 1 || (at && (g->replicas < 1 || g->count % g->replicas != 0))) {
            free(copy);
            return -1;
        }
        s->nranks += g->count;
        s->ngroups++;
    }
    free(copy);
    return s->ngroups > 0 && s->nranks <= MAX_RANKS ? 0 : -1;
}

/* `buf` (512 bytes) holds the names of an override: one per worker, so that
 * threads do not share it. */
static int role_phases(const sim_t *s, const char *role, const char *out[8], char *buf)
{
    int n = 0;
    if (s->phases_override[0]) {
        snprintf(buf, 512, "%s", s->phases_override);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t && n < 8; t = strtok_r(NULL, ",", &save)) {
            out[n++] = t;
        }
        return n;
    }
    if (strcmp(role, "rollout") == 0) {
        out[n++] = "generate";
    } else if (strcmp(role, "actor") == 0) {
        out[n++] = "compute_log_prob";
        out[n++] = "update_actor";
    } else if (strcmp(role, "ref") == 0) {
        out[n++] = "ref_compute_log_prob";
    } else if (strcmp(role, "critic") == 0) {
        out[n++] = "compute_values";
        out[n++] = "update_critic";
    } else if (strcmp(role, "reward") == 0) {
        out[n++] = "compute_rm_score";
    } else {
        out[n++] = "work";
    }
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps in slices of at most 100 ms: in threads mode a signal wakes only
 * one thread, and the others must still notice the stop soon. */
static void sleep_until(double t)
{
    double d;
    while (!stop_flag && (d = t - now_s()) > 0) {
        if (d > 0.1) {
            d = 0.1;
        }
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* A fixed amount of CPU work the compiler cannot remove. */
static void work(int64_t thousands)
{
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i < thousands * 1000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    __asm__ volatile("" : : "r"(x)); /* keep the loop */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* With --report: a backend call (a trace written) ran inside the profd call
 * being timed, on this training thread. */
static __thread bool backend_ran;

static void print_report(int rank, double *t, int64_t n, double longest, double longest_own)
{
    if (n == 0) {
        printf("profd-sim: rank %d: 0 steps\n", rank);
        return;
    }
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    printf("profd-sim: rank %d: %lld steps, step time median %.1f us, p10 %.1f us, p90 %.1f us, "
           "longest profd call %.1f us (%.1f us without a backend call in it)\n",
           rank, (long long)n, t[n / 2] * 1e6, t[n / 10] * 1e6, t[(n * 9) / 10] * 1e6,
           longest * 1e6, longest_own * 1e6);
    fflush(stdout);
}

/* With --report: the longest a profd call took on the training thread. */
#define TIMED(r, call)                                                                             \
    do {                                                                                           \
        if ((r)->times) {                                                                          \
            backend_ran = false;                                                                   \
            double c0_ = now_s();                                                                  \
            call;                                                                                  \
            double d_ = now_s() - c0_;                                                             \
            (r)->longest = d_ > (r)->longest ? d_ : (r)->longest;                                  \
            if (!backend_ran) {                                                                    \
                (r)->longest_own = d_ > (r)->longest_own ? d_ : (r)->longest_own;                  \
            }                                                                                      \
        } else {                                                                                   \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

/* ---- the sim backend with the default size of this run ---- */

typedef struct sim_user {
    int64_t bytes;
} sim_user_t;

static int with_size(const profd_capture_t *cap, void *user, char *reason, size_t len,
                     int (*fn)(const profd_capture_t *, void *, char *, size_t))
{
    sim_user_t *u = user;
    char settings[64];
    if (pp_json_get_i64(cap->settings_json, "bytes", -1) >= 0) {
        return fn(cap, NULL, reason, len);
    }
    profd_capture_t c = *cap;
    snprintf(settings, sizeof(settings), "{\"bytes\":%lld}", (long long)u->bytes);
    c.settings_json = settings;
    return fn(&c, NULL, reason, len);
}

static int sized_start(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    backend_ran = true;
    return with_size(cap, user, reason, len, profd_backend_sim()->start);
}

static int sized_stop(const profd_capture_t *cap, void *user, char *reason, size_t len)
{
    backend_ran = true;
    return with_size(cap, user, reason, len, profd_backend_sim()->stop);
}

static const profd_backend_t sized_sim = {"*", 0, sized_start, sized_stop, NULL};

static void log_hook(void *arg, int level, const char *msg)
{
    fprintf(stderr, "[rank %d] %s\n", *(int *)arg, msg);
}

/* ---- one rank: its client and its place in the training loop ---- */

#define REPORT_MAX (1 << 20) /* step times kept per rank for --report */

enum { AT_STEP, AT_SUBSTEP, AT_STEP_END, AT_DONE };

/* A simulated rank: a real libprofd client of its own, and the state of its
 * training loop, so that one thread can drive several ranks in turn (each
 * turn runs a rank up to its next wait: a sub-step or the rest of its step
 * period). */
typedef struct sim_rank {
    const sim_t *s;
    const char *role;
    int rank, local, replica;
    profd_client_t *c;
    sim_user_t user;
    const char *phases[8];
    char names[512]; /* the phase names of an override, this rank's copy */
    int nph;
    int at; /* AT_*: what the rank does at its next turn */
    int64_t step;
    int phase, substep; /* the current phase and sub-step in it */
    double t;           /* the rank's clock: when its next turn is due */
    double t0, period, slice, began;
    uint64_t seq;                        /* the group's order among ranks due together */
    double *times, longest, longest_own; /* --report */
    int64_t ntimes;
} sim_rank_t;

static void rank_init(sim_rank_t *r, const sim_t *s, const char *role, int rank, int local,
                      int replica)
{
    memset(r, 0, sizeof(*r));
    r->s = s;
    r->role = role;
    r->rank = rank;
    r->local = local;
    r->replica = replica;
    r->user.bytes = s->trace_bytes;
    r->nph = role_phases(s, role, r->phases, r->names);
    r->at = AT_STEP;
    r->step = s->start_step;
}

/* Opens the rank's client (it registers in the background). Returns 0, or
 * 1 with a message on stderr. */
static int rank_open(sim_rank_t *r)
{
    const sim_t *s = r->s;
    profd_options_t o;

    profd_options_init(&o);
    o.url = s->url;
    o.job = s->job;
    o.role = r->role;
    o.host = s->host;
    o.rank = r->rank;
    o.local_rank = r->local;
    o.world_size = s->nranks + s->rank_offset;
    o.replica_rank = r->replica;
    if (s->flush_ms > 0) {
        o.flush_ms = s->flush_ms;
    }
    if (s->verbose) {
        o.log = log_hook;
        o.log_arg = &r->rank;
        o.log_level = PROFD_LOG_DEBUG;
    }
    int rv = profd_open(&r->c, &o);
    if (rv != 0) {
        fprintf(stderr, "profd-sim: rank %d: profd_open: %s\n", r->rank, profd_strerror(rv));
        r->c = NULL;
        return 1;
    }
    profd_set_backend(r->c, profd_backend_exec(), NULL);
    profd_set_backend(r->c, &sized_sim, &r->user);
    if (s->report) {
        int64_t n = s->steps < REPORT_MAX ? s->steps : REPORT_MAX;
        r->times = malloc((size_t)n * sizeof(*r->times));
    }
    return 0;
}

/* Closes the client (ending its captures here, on the training thread) and
 * prints the rank's report. */
static void rank_close(sim_rank_t *r)
{
    profd_close(r->c);
    r->c = NULL;
    if (r->times) {
        print_report(r->rank, r->times, r->ntimes, r->longest, r->longest_own);
        free(r->times);
        r->times = NULL;
    }
}

/* One turn: does what was due (a sub-step's work and profd_substep, or the
 * step's end), then runs the loop up to the next wait and sets r->t to when
 * that is due. The calls and their timing are those of a rank with a thread
 * of its own. Returns false when the rank has done its steps or the
 * simulator is stopping. */
static bool rank_turn(sim_rank_t *r)
{
    const sim_t *s = r->s;

    if (r->at == AT_SUBSTEP) {
        if (s->work > 0) {
            work(s->work);
        }
        TIMED(r, profd_substep(r->c));
        r->substep++;
    } else if (r->at == AT_STEP_END) {
        TIMED(r, profd_step_end(r->c, r->step));
        if (r->times && r->ntimes < REPORT_MAX) {
            r->times[r->ntimes++] = now_s() - r->began;
        }
        r->step++;
        r->at = AT_STEP;
    }
    if (r->at == AT_STEP) {
        if (stop_flag || r->step >= s->start_step + s->steps) {
            r->at = AT_DONE;
            return false;
        }
        double base = s->rate > 0 && s->work == 0 ? 1.0 / s->rate : 0;
        r->period = base * slowdown(s, r->rank, r->step);
        r->slice = r->nph && s->substeps ? r->period / (r->nph * s->substeps) : r->period;
        r->t0 = r->t;
        r->began = now_s();
        TIMED(r, profd_step_begin(r->c, r->step));
        r->phase = 0;
        r->substep = 0;
        if (r->nph > 0) {
            TIMED(r, profd_phase_begin(r->c, r->phases[0]));
        }
    }
    while (r->phase < r->nph && r->substep >= s->substeps) {
        TIMED(r, profd_phase_end(r->c, r->phases[r->phase]));
        r->phase++;
        r->substep = 0;
        if (r->phase < r->nph) {
            TIMED(r, profd_phase_begin(r->c, r->phases[r->phase]));
        }
    }
    if (r->phase < r->nph) {
        r->at = AT_SUBSTEP;
        if (s->work == 0) {
            r->t += r->slice;
        }
    } else {
        r->at = AT_STEP_END;
        if (s->work == 0) {
            r->t = r->t0 + r->period;
        }
    }
    return true;
}

/* ---- a worker group: one training thread driving its ranks in turn ---- */

/* The group's ranks by the time their next turn is due, then by when they
 * were queued: round robin when every turn is due at once (--work). */
static bool due_before(const sim_rank_t *a, const sim_rank_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_push(sim_rank_t **h, int *n, sim_rank_t *r)
{
    int i = (*n)++;
    while (i > 0 && due_before(r, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = r;
}

static sim_rank_t *heap_pop(sim_rank_t **h, int *n)
{
    sim_rank_t *top = h[0], *last = h[--*n];
    int i = 0;
    for (;;) {
        int k = 2 * i + 1;
        if (k >= *n) {
            break;
        }
        if (k + 1 < *n && due_before(h[k + 1], h[k])) {
            k++;
        }
        if (!due_before(h[k], last)) {
            break;
        }
        h[i] = h[k];
        i = k;
    }
    if (*n > 0) {
        h[i] = last;
    }
    return top;
}

/* Opens every rank of the group, runs their training loops on this thread
 * (the rank whose turn is due first goes next; with --work, in turn), and
 * closes each when it is done. Returns how many ranks failed to open. */
static int worker_group(sim_rank_t *ranks, int n)
{
    sim_rank_t **heap = malloc((size_t)n * sizeof(*heap));
    int live = 0, failed = 0;
    uint64_t seq = 0;

    if (heap == NULL) {
        fprintf(stderr, "profd-sim: out of memory\n");
        return n;
    }
    for (int i = 0; i < n && !stop_flag; i++) {
        failed += rank_open(&ranks[i]);
        double until = now_s() + ranks[i].s->open_wait / 1000.0;
        profd_stats_t st = {0};
        while (ranks[i].c && !stop_flag && now_s() < until &&
               (profd_stats(ranks[i].c, &st) != 0 || !st.connected)) {
            sleep_until(now_s() + 0.025); /* 256 threads polling: not too often */
        }
    }
    double t = now_s();
    for (int i = 0; i < n; i++) {
        if (ranks[i].c != NULL) {
            ranks[i].t = t;
            ranks[i].seq = seq++;
            heap_push(heap, &live, &ranks[i]);
        }
    }
    while (live > 0) {
        sim_rank_t *r = heap[0];
        if (r->s->work == 0) {
            sleep_until(r->t);
        }
        heap_pop(heap, &live);
        if (rank_turn(r)) {
            r->seq = seq++;
            heap_push(heap, &live, r);
        } else {
            rank_close(r);
        }
    }
    free(heap);
    return failed;
}

/* ---- threads mode ---- */

typedef struct group_thread {
    pthread_t tid;
    sim_rank_t *ranks;
    int n, failed;
} group_thread_t;

static void *group_main(void *arg)
{
    group_thread_t *g = arg;
    g->failed = worker_group(g->ranks, g->n);
    return NULL;
}

static int run_threads(const sim_t *s)
{
    int nthreads = (s->nranks + s->ranks_per_thread - 1) / s->ranks_per_thread;
    sim_rank_t *rk = calloc((size_t)s->nranks, sizeof(*rk));
    group_thread_t *th = calloc((size_t)nthreads, sizeof(*th));
    int rank = s->rank_offset, n = 0, spawned = 0, failed = 0, unrun = s->nranks;
    if (rk == NULL || th == NULL) {
        fprintf(stderr, "profd-sim: out of memory\n");
        free(rk);
        free(th);
        return 1;
    }
    for (int g = 0; g < s->ngroups; g++) {
        const group_t *gr = &s->groups[g];
        for (int i = 0; i < gr->count; i++, rank++) {
            int replica = gr->replicas ? s->replica_offset + i / (gr->count / gr->replicas)
                                       : PROFD_NO_REPLICA;
            rank_init(&rk[n++], s, gr->role, rank, rank - s->rank_offset, replica);
        }
    }
    for (int i = 0; i < nthreads && !stop_flag; i++) {
        group_thread_t *g = &th[i];
        g->ranks = &rk[i * s->ranks_per_thread];
        g->n = s->nranks - i * s->ranks_per_thread;
        if (g->n > s->ranks_per_thread) {
            g->n = s->ranks_per_thread;
        }
        int rv = pthread_create(&g->tid, NULL, group_main, g);
        if (rv != 0) {
            fprintf(stderr, "profd-sim: pthread_create: %s\n", strerror(rv));
            stop_flag = 1;
            break;
        }
        /* the training threads, told apart from the library's own */
        pthread_setname_np(g->tid, "sim-rank");
        spawned++;
    }
    printf("profd-sim: %d worker thread(s) for %d rank(s), %lld step(s) from %lld at %.3g/s\n",
           spawned, s->nranks, (long long)s->steps, (long long)s->start_step, s->rate);
    fflush(stdout);
    for (int i = 0; i < spawned; i++) {
        pthread_join(th[i].tid, NULL);
        failed += th[i].failed;
        unrun -= th[i].n;
    }
    free(th);
    free(rk);
    if (failed || unrun) {
        fprintf(stderr, "profd-sim: %d worker(s) failed\n", failed + unrun);
        return 1;
    }
    printf("profd-sim: %d worker thread(s) finished\n", spawned);
    return 0;
}

/* The options (main's opts[]). */
enum {
    O_LAYOUT = 1,
    O_STEPS,
    O_START,
    O_RATE,
    O_SUB,
    O_PHASES,
    O_BYTES,
    O_JOB,
    O_URL,
    O_HOST,
    O_OFFSET,
    O_REPLICA_OFFSET,
    O_THREADS,
    O_RANKS_PER_THREAD,
    O_WORK,
    O_REPORT,
    O_SLOW,
    O_FLUSH,
    O_OPEN_WAIT,
    O_VERBOSE,
    O_HELP
};

/* The options that only set a field of sim_t, as atoll, atoi or atof reads
 * the value; main() handles the others itself. */
enum { K_I64, K_INT, K_DOUBLE, K_STR, K_TRUE };
static const struct plain_opt {
    int opt, kind;
    size_t off;
} plain_opts[] = {
    {O_STEPS, K_I64, offsetof(sim_t, steps)},
    {O_START, K_I64, offsetof(sim_t, start_step)},
    {O_RATE, K_DOUBLE, offsetof(sim_t, rate)},
    {O_SUB, K_INT, offsetof(sim_t, substeps)},
    {O_BYTES, K_I64, offsetof(sim_t, trace_bytes)},
    {O_JOB, K_STR, offsetof(sim_t, job)},
    {O_URL, K_STR, offsetof(sim_t, url)},
    {O_HOST, K_STR, offsetof(sim_t, host)},
    {O_OFFSET, K_INT, offsetof(sim_t, rank_offset)},
    {O_REPLICA_OFFSET, K_INT, offsetof(sim_t, replica_offset)},
    {O_THREADS, K_TRUE, offsetof(sim_t, threads)},
    {O_WORK, K_I64, offsetof(sim_t, work)},
    {O_REPORT, K_TRUE, offsetof(sim_t, report)},
    {O_FLUSH, K_INT, offsetof(sim_t, flush_ms)},
    {O_VERBOSE, K_TRUE, offsetof(sim_t, verbose)},
};

/* Option ch when it is a plain one: its value stored, true; else false. */
static bool plain_store(sim_t *s, int ch, char *arg)
{
    for (size_t i = 0; i < sizeof(plain_opts) / sizeof(plain_opts[0]); i++) {
        const struct plain_opt *o = &plain_opts[i];
        if (o->opt != ch) {
            continue;
        }
        char *at = (char *)s + o->off;
        switch (o->kind) {
        case K_I64:
            *(int64_t *)at = atoll(arg);
            break;
        case K_INT:
            *(int *)at = atoi(arg);
            break;
        case K_DOUBLE:
            *(double *)at = atof(arg);
            break;
        case K_STR:
            *(const char **)at = arg;
            break;
        default:
            *(bool *)at = true;
            break;
        }
        return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"layout", required_argument, NULL, O_LAYOUT},
        {"steps", required_argument, NULL, O_STEPS},
        {"start-step", required_argument, NULL, O_START},
        {"rate", required_argument, NULL, O_RATE},
        {"substeps", required_argument, NULL, O_SUB},
        {"phases", required_argument, NULL, O_PHASES},
        {"trace-bytes", required_argument, NULL, O_BYTES},
        {"job", required_argument, NULL, O_JOB},
        {"url", required_argument, NULL, O_URL},
        {"host", required_argument, NULL, O_HOST},
        {"rank-offset", required_argument, NULL, O_OFFSET},
        {"replica-offset", required_argument, NULL, O_REPLICA_OFFSET},
        {"threads", no_argument, NULL, O_THREADS},
        {"ranks-per-thread", required_argument, NULL, O_RANKS_PER_THREAD},
        {"work", required_argument, NULL, O_WORK},
        {"report", no_argument, NULL, O_REPORT},
        {"slow", required_argument, NULL, O_SLOW},
        {"flush-ms", required_argument, NULL, O_FLUSH},
        {"open-wait", required_argument, NULL, O_OPEN_WAIT},
        {"verbose", no_argument, NULL, O_VERBOSE},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    sim_t s;
    int ch;
    bool have_layout = false, have_rpt = false;

    memset(&s, 0, sizeof(s));
    s.steps = 20;
    s.start_step = 1;
    s.rate = 10;
    s.substeps = 4;
    s.trace_bytes = 65536;
    s.ranks_per_thread = 1;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case O_LAYOUT:
            if (parse_layout(&s, optarg) != 0) {
                fprintf(stderr,
                        "profd-sim: --layout: expected ROLE:N[@REPLICAS],... with N a "
                        "multiple of REPLICAS, found '%s'\n",
                        optarg);
                return 2;
            }
            have_layout = true;
            break;
        case O_PHASES:
            snprintf(s.phases_override, sizeof(s.phases_override), "%s", optarg);
            break;
        case O_RANKS_PER_THREAD: {
            char *end = NULL;
            errno = 0;
            long k = strtol(optarg, &end, 10);
            if (errno != 0 || end == optarg || *end != '\0' || k < 1 || k > MAX_RANKS) {
                fprintf(stderr, "profd-sim: --ranks-per-thread: expected 1 to %d, found '%s'\n",
                        MAX_RANKS, optarg);
                return 2;
            }
            s.ranks_per_thread = (int)k;
            have_rpt = true;
            break;
        }
        case O_OPEN_WAIT: {
            char *end = NULL;
            errno = 0;
            long ms = strtol(optarg, &end, 10);
            if (errno != 0 || end == optarg || *end != '\0' || ms < 0 || ms > 600000) {
                fprintf(stderr, "profd-sim: --open-wait: expected 0 to 600000 ms, found '%s'\n",
                        optarg);
                return 2;
            }
            s.open_wait = (int)ms;
            break;
        }
        case O_SLOW: {
            long long r, from = 0;
            double f;
            int k = 0;
            if (s.nslow == 8 ||
                (sscanf(optarg, "%lld:%lf%n", &r, &f, &k) != 2 ||
                 (optarg[k] != '\0' && sscanf(optarg + k, "@%lld", &from) != 1)) ||
                r < 0 || !(f > 0 && f <= 1000) || from < 0) {
                fprintf(stderr,
                        "profd-sim: --slow: expected RANK:FACTOR[@STEP], e.g. 5:3@100, "
                        "found '%s'\n",
                        optarg);
                return 2;
            }
            s.slow[s.nslow].rank = r;
            s.slow[s.nslow].factor = f;
            s.slow[s.nslow].from = from;
            s.nslow++;
            break;
        }
        case O_HELP:
            usage(stdout);
            return 0;
        default:
            if (plain_store(&s, ch, optarg)) {
                break;
            }
            usage(stderr);
            return 2;
        }
    }
    if (!have_layout || optind < argc || s.steps < 1 || s.start_step < 0 || s.rate < 0 ||
        s.substeps < 0 || s.trace_bytes < 0 || s.rank_offset < 0 || s.replica_offset < 0 ||
        s.work < 0) {
        fprintf(stderr, "profd-sim: %s\n",
                !have_layout ? "--layout is required" : "invalid arguments");
        usage(stderr);
        return 2;
    }

    if (have_rpt && !s.threads) {
        fprintf(stderr, "profd-sim: --ranks-per-thread needs --threads\n");
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (s.threads) {
        return run_threads(&s);
    }
    pid_t *pids = calloc((size_t)s.nranks, sizeof(*pids));
    pid_t parent = getpid();
    int rank = s.rank_offset, spawned = 0;
    for (int g = 0; g < s.ngroups; g++) {
        const group_t *gr = &s.groups[g];
        for (int i = 0; i < gr->count; i++, rank++) {
            int replica =
                gr->replicas ? s.replica_offset + i / (gr->count / gr->replicas) : PROFD_NO_REPLICA;
            pid_t pid = fork();
            if (pid == 0) {
                /* a simulator killed with SIGKILL takes its workers along */
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != parent) {
                    _exit(1);
                }
                free(pids);
                sim_rank_t r;
                rank_init(&r, &s, gr->role, rank, rank - s.rank_offset, replica);
                _exit(worker_group(&r, 1) != 0);
            }
            if (pid < 0) {
                fprintf(stderr, "profd-sim: fork: %s\n", strerror(errno));
                stop_flag = 1;
                break;
            }
            pids[spawned++] = pid;
        }
    }
    printf("profd-sim: %d worker(s), %lld step(s) from %lld at %.3g/s\n", spawned,
           (long long)s.steps, (long long)s.start_step, s.rate);
    fflush(stdout);
    int failed = 0;
    for (int i = 0; i < spawned; i++) {
        int st;
        while (waitpid(pids[i], &st, 0) < 0) {
            if (errno != EINTR) {
                break;
            }
            if (stop_flag) { /* pass the stop on to every worker */
                for (int k = 0; k < spawned; k++) {
                    kill(pids[k], SIGTERM);
                }
            }
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
        }
    }
    free(pids);
    if (failed) {
        fprintf(stderr, "profd-sim: %d worker(s) failed\n", failed);
        return 1;
    }
    printf("profd-sim: %d worker(s) finished\n", spawned);
    return 0;
}
