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
 * cores; --work replaces the sleeps by a fixed amount of CPU work, and
 * --report prints each rank's step times: the benchmarks' training overhead.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
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
    int64_t work; /* thousands of iterations of CPU work per sub-step; 0: sleep */
    bool report;
    int flush_ms; /* the client's flush period; 0: the library's default */
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
            "  --work N          instead of sleeping, do N thousand iterations of arithmetic per\n"
            "                    sub-step and run the steps back to back (--rate is ignored)\n"
            "  --report          print each rank's step times on exit (median, p10, p90) and\n"
            "                    the longest a profd call took on its training thread (with\n"
            "                    and without a backend call, a trace written, in it)\n"
            "  --slow R:F[@S]    global rank R takes F times as long per step from step S on\n"
            "                    (default: from its first step): a straggler; repeatable\n"
            "  --flush-ms N      the client's event flush period (default: the library's, 50 ms);\n"
            "                    many simulated ranks on few cores: fewer background wakeups\n"
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
#define TIMED(call)                                                                                \
    do {                                                                                           \
        if (times) {                                                                               \
            backend_ran = false;                                                                   \
            double c0_ = now_s();                                                                  \
            call;                                                                                  \
            double d_ = now_s() - c0_;                                                             \
            longest = d_ > longest ? d_ : longest;                                                 \
            if (!backend_ran) {                                                                    \
                longest_own = d_ > longest_own ? d_ : longest_own;                                 \
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

/* ---- one worker ---- */

static int worker(const sim_t *s, const char *role, int rank, int local, int replica)
{
    profd_options_t o;
    profd_client_t *c;
    sim_user_t user = {s->trace_bytes};
    const char *phases[8];
    char names[512];
    int nph = role_phases(s, role, phases, names);
    double *times = NULL, longest = 0, longest_own = 0;
    int64_t ntimes = 0;

    profd_options_init(&o);
    o.url = s->url;
    o.job = s->job;
    o.role = role;
    o.host = s->host;
    o.rank = rank;
    o.local_rank = local;
    o.world_size = s->nranks + s->rank_offset;
    o.replica_rank = replica;
    if (s->flush_ms > 0) {
        o.flush_ms = s->flush_ms;
    }
    if (s->verbose) {
        o.log = log_hook;
        o.log_arg = &rank;
        o.log_level = PROFD_LOG_DEBUG;
    }
    int rv = profd_open(&c, &o);
    if (rv != 0) {
        fprintf(stderr, "profd-sim: rank %d: profd_open: %s\n", rank, profd_strerror(rv));
        return 1;
    }
    profd_set_backend(c, profd_backend_exec(), NULL);
    profd_set_backend(c, &sized_sim, &user);
    if (s->report) {
        times = malloc((size_t)(s->steps < (1 << 20) ? s->steps : (1 << 20)) * sizeof(*times));
    }

    double base = s->rate > 0 && s->work == 0 ? 1.0 / s->rate : 0;
    double t = now_s();
    for (int64_t step = s->start_step; step < s->start_step + s->steps && !stop_flag; step++) {
        double period = base * slowdown(s, rank, step);
        double slice = nph && s->substeps ? period / (nph * s->substeps) : period;
        double t0 = t, began = now_s();
        TIMED(profd_step_begin(c, step));
        for (int p = 0; p < nph; p++) {
            TIMED(profd_phase_begin(c, phases[p]));
            for (int k = 0; k < s->substeps; k++) {
                if (s->work > 0) {
                    work(s->work);
                } else {
                    t += slice;
                    sleep_until(t);
                }
                TIMED(profd_substep(c));
            }
            TIMED(profd_phase_end(c, phases[p]));
        }
        if (s->work == 0) {
            t = t0 + period;
            sleep_until(t);
        }
        TIMED(profd_step_end(c, step));
        if (times && ntimes < (1 << 20)) {
            times[ntimes++] = now_s() - began;
        }
    }
    profd_close(c);
    if (times) {
        print_report(rank, times, ntimes, longest, longest_own);
        free(times);
    }
    return 0;
}

/* ---- threads mode ---- */

typedef struct rank_thread {
    pthread_t tid;
    const sim_t *s;
    const char *role;
    int rank, local, replica, rv;
} rank_thread_t;

static void *rank_main(void *arg)
{
    rank_thread_t *r = arg;
    r->rv = worker(r->s, r->role, r->rank, r->local, r->replica);
    return NULL;
}

static int run_threads(const sim_t *s)
{
    rank_thread_t *th = calloc((size_t)s->nranks, sizeof(*th));
    int rank = s->rank_offset, spawned = 0, failed = 0;
    if (th == NULL) {
        fprintf(stderr, "profd-sim: out of memory\n");
        return 1;
    }
    for (int g = 0; g < s->ngroups && !stop_flag; g++) {
        const group_t *gr = &s->groups[g];
        for (int i = 0; i < gr->count; i++, rank++) {
            rank_thread_t *r = &th[spawned];
            r->s = s;
            r->role = gr->role;
            r->rank = rank;
            r->local = rank - s->rank_offset;
            r->replica = gr->replicas ? s->replica_offset + i / (gr->count / gr->replicas)
                                      : PROFD_NO_REPLICA;
            int rv = pthread_create(&r->tid, NULL, rank_main, r);
            if (rv != 0) {
                fprintf(stderr, "profd-sim: pthread_create: %s\n", strerror(rv));
                stop_flag = 1;
                break;
            }
            /* the training threads, told apart from the library's own */
            pthread_setname_np(r->tid, "sim-rank");
            spawned++;
        }
    }
    printf("profd-sim: %d worker thread(s), %lld step(s) from %lld at %.3g/s\n", spawned,
           (long long)s->steps, (long long)s->start_step, s->rate);
    fflush(stdout);
    for (int i = 0; i < spawned; i++) {
        pthread_join(th[i].tid, NULL);
        failed += th[i].rv != 0;
    }
    free(th);
    if (failed || spawned < s->nranks) {
        fprintf(stderr, "profd-sim: %d worker(s) failed\n", failed + s->nranks - spawned);
        return 1;
    }
    printf("profd-sim: %d worker thread(s) finished\n", spawned);
    return 0;
}

int main(int argc, char **argv)
{
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
        O_WORK,
        O_REPORT,
        O_SLOW,
        O_FLUSH,
        O_VERBOSE,
        O_HELP
    };
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
        {"work", required_argument, NULL, O_WORK},
        {"report", no_argument, NULL, O_REPORT},
        {"slow", required_argument, NULL, O_SLOW},
        {"flush-ms", required_argument, NULL, O_FLUSH},
        {"verbose", no_argument, NULL, O_VERBOSE},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    sim_t s;
    int ch;
    bool have_layout = false;

    memset(&s, 0, sizeof(s));
    s.steps = 20;
    s.start_step = 1;
    s.rate = 10;
    s.substeps = 4;
    s.trace_bytes = 65536;
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
        case O_STEPS:
            s.steps = atoll(optarg);
            break;
        case O_START:
            s.start_step = atoll(optarg);
            break;
        case O_RATE:
            s.rate = atof(optarg);
            break;
        case O_SUB:
            s.substeps = atoi(optarg);
            break;
        case O_PHASES:
            snprintf(s.phases_override, sizeof(s.phases_override), "%s", optarg);
            break;
        case O_BYTES:
            s.trace_bytes = atoll(optarg);
            break;
        case O_JOB:
            s.job = optarg;
            break;
        case O_URL:
            s.url = optarg;
            break;
        case O_HOST:
            s.host = optarg;
            break;
        case O_OFFSET:
            s.rank_offset = atoi(optarg);
            break;
        case O_REPLICA_OFFSET:
            s.replica_offset = atoi(optarg);
            break;
        case O_THREADS:
            s.threads = true;
            break;
        case O_WORK:
            s.work = atoll(optarg);
            break;
        case O_FLUSH:
            s.flush_ms = atoi(optarg);
            break;
        case O_REPORT:
            s.report = true;
            break;
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
        case O_VERBOSE:
            s.verbose = true;
            break;
        case O_HELP:
            usage(stdout);
            return 0;
        default:
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
                _exit(worker(&s, gr->role, rank, rank - s.rank_offset, replica));
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
