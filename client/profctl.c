/*
 * profctl: the control CLI of profd. Talks to the control socket with the
 * same codec as the daemon (proto/), prints human tables by default and the
 * reply documents with --json. Exit status: 0 success; 1 error (one line on
 * stderr); 2 usage error; 3 (wait) window done but not every capture
 * complete.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "profd/client.h"
#include "profd/proto.h"
#include "rundir.h"
#include "tlsconf.h"

#define MAX_LIST 4096

typedef struct ctl {
    char url[PP_MAX_PATH];
    bool json;
    int timeout_ms;
    pt_tls_files_t tls; /* tls+tcp:// URLs */
    void *tls_cfg;
    nng_socket sock;
    bool open;
} ctl_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profctl [--url URL] [--json] [--timeout S] COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  status [--job J]               registered ranks: role, rank, replica, host, pid,\n"
            "                                 step, step time, state\n"
            "  windows [--job J] [ID]         windows and their state (ID: one, in detail)\n"
            "  start [options]                open a profiling window:\n"
            "      --steps 2,4 | 5:10 | 5:    steps (list; half-open range; open end)\n"
            "      --next N [--roundup R]     the next N steps every selected rank can reach\n"
            "      --roles actor,rollout      roles (default: every role)\n"
            "      --ranks 0,1|all            global ranks (default: all)\n"
            "      --replica-ranks 0,1        inference replica indices\n"
            "      --phases generate,...      phases (implies --discrete)\n"
            "      --discrete | --e2e         one capture per phase | per process (default)\n"
            "      --continuous               one window per run of consecutive --steps\n"
            "      --tool T                   torch|npu|nsys|torch_memory|cuda|exec|sim\n"
            "      --level L --contents a,b   tool settings (npu/torch)\n"
            "      --settings JSON            tool settings as a JSON object\n"
            "      --schedule wait=1,warmup=1,active=3,repeat=1,skip_first=0\n"
            "      --job J --save-path P\n"
            "  stop [ID] [--job J]            end a window at the next aligned step (all: no ID)\n"
            "  wait ID [--timeout S]          wait until the window is gathered\n"
            "  apply FILE [key=value ...]     load a verl / MindSpeed / Megatron YAML with\n"
            "        [--job J]                Hydra-style overrides (+key=value to add)\n"
            "\n"
            "options:\n"
            "  -u, --url URL     control endpoint (default $PROFD_CONTROL_URL, else\n"
            "                    ipc://RUN_DIR/control.sock: $PROFD_RUN_DIR if absolute,\n"
            "                    else /run/profd or /tmp/profd-UID, whichever holds it)\n"
            "  -j, --json        print the reply documents as JSON\n"
            "  -t, --timeout S   request timeout in seconds (default 10)\n"
            "      --tls-ca FILE           tls+tcp:// URLs: CA certificate the daemon's\n"
            "                              certificate must chain to ($PROFD_TLS_CA)\n"
            "      --tls-cert FILE         this client's certificate, signed by the CA the\n"
            "                              daemon trusts ($PROFD_TLS_CERT)\n"
            "      --tls-key FILE          its private key (default: in --tls-cert;\n"
            "                              $PROFD_TLS_KEY)\n"
            "      --tls-server-name NAME  DNS name the daemon's certificate must carry\n"
            "                              (default: the URL's host; $PROFD_TLS_SERVER_NAME)\n"
            "  -h, --help        this help\n"
            "  -V, --version     print the version\n"
            "\n"
            "exit status: 0 success, 1 error, 2 usage, 3 window done with incomplete captures\n");
}

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "profctl: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return code;
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "profctl: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see profctl --help)\n");
    va_end(ap);
    return 2;
}

/* ---- transport ---- */

/* $PROFD_CONTROL_URL, else the control socket where the rule of libprofd
 * finds the daemon (rundir.h). */
static void default_url(char *buf, size_t len)
{
    const char *u = getenv("PROFD_CONTROL_URL");
    cl_rundir_t rd;
    if (u && *u) {
        snprintf(buf, len, "%s", u);
        return;
    }
    cl_rundir_init(&rd);
    if (rd.ignored) {
        fprintf(stderr,
                "profctl: warning: PROFD_RUN_DIR is not an absolute path of at most %d bytes: "
                "ignored\n",
                PP_RUN_DIR_MAX);
    }
    cl_rundir_url(&rd, "control.sock", buf, len);
}

static int ctl_connect(ctl_t *c)
{
    char err[512];
    nng_dialer d;
    int rv;
    if ((rv = nng_req0_open(&c->sock)) != 0) {
        return die(1, "cannot open a socket: %s", nng_strerror(rv));
    }
    c->open = true;
    nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, 64u << 20);
    if ((rv = nng_dialer_create(&d, c->sock, c->url)) != 0) {
        return die(1, "invalid address %s: %s", c->url, nng_strerror(rv));
    }
    if (pt_tls_url(c->url)) {
        if ((c->tls_cfg = pt_tls_config(&c->tls, false, err, sizeof(err))) == NULL) {
            return die(1, "%s: %s (see --tls-ca, --tls-cert, --tls-key)", c->url, err);
        }
        nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, c->tls_cfg);
    }
    if ((rv = nng_dialer_start(d, 0)) != 0) {
        if (pt_tls_url(c->url) && (rv == NNG_ECRYPTO || rv == NNG_EPEERAUTH || rv == NNG_ECLOSED ||
                                   rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT)) {
            return die(1,
                       "cannot reach profd at %s: %s (TLS: does the daemon trust this client's "
                       "certificate, and does its certificate chain to --tls-ca and name the "
                       "host?)",
                       c->url, nng_strerror(rv));
        }
        return die(1, "cannot reach profd at %s: %s (is profd running?)", c->url, nng_strerror(rv));
    }
    return 0;
}

/* Send a request, wait for the reply. Error replies print their message. */
static int ctl_call(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep)
{
    char *buf, err[256];
    size_t len;
    nng_msg *m;
    nng_aio *aio;
    int rv;

    if (!c->open && ctl_connect(c) != 0) {
        return 1;
    }
    if (pp_msg_encode(req, &buf, &len) != 0) {
        return die(1, "cannot encode the request");
    }
    if (nng_aio_alloc(&aio, NULL, NULL) != 0 || nng_msg_alloc(&m, 0) != 0 ||
        nng_msg_append(m, buf, len) != 0) {
        free(buf);
        return die(1, "out of memory");
    }
    free(buf);
    nng_aio_set_msg(aio, m);
    nng_aio_set_timeout(aio, c->timeout_ms);
    nng_ctx ctx;
    nng_ctx_open(&ctx, c->sock);
    nng_ctx_send(ctx, aio);
    nng_aio_wait(aio);
    if ((rv = nng_aio_result(aio)) != 0) {
        nng_msg_free(nng_aio_get_msg(aio));
        nng_aio_free(aio);
        return die(1, "cannot send to %s: %s", c->url, nng_strerror(rv));
    }
    nng_ctx_recv(ctx, aio);
    nng_aio_wait(aio);
    if ((rv = nng_aio_result(aio)) != 0) {
        nng_aio_free(aio);
        nng_ctx_close(ctx);
        return die(1, "no reply from %s: %s", c->url, nng_strerror(rv));
    }
    m = nng_aio_get_msg(aio);
    nng_aio_free(aio);
    nng_ctx_close(ctx);
    rv = pp_msg_decode(nng_msg_body(m), nng_msg_len(m), 64u << 20, rep, err, sizeof(err));
    nng_msg_free(m);
    if (rv != 0) {
        return die(1, "bad reply from profd: %s", err);
    }
    if (rep->type == PP_T_error) {
        die(1, "%s (%s)", rep->u.error.message ? rep->u.error.message : "error",
            rep->u.error.name ? rep->u.error.name : "?");
        pp_msg_free(rep);
        return 1;
    }
    return 0;
}

static void print_json(const pp_msg_t *m)
{
    char *buf;
    if (pp_record_encode(pp_type_desc(m->type), &m->u, true, &buf, NULL) == 0) {
        printf("%s\n", buf);
        free(buf);
    }
}

/* ---- parsing helpers ---- */

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

/* "0,1,5" -> list */
static int parse_list(const char *s, int64_t **out, size_t *n)
{
    char *copy = strdup(s), *save = NULL;
    int64_t *v = calloc(MAX_LIST, sizeof(*v));
    size_t k = 0;
    if (copy == NULL || v == NULL) {
        free(copy);
        free(v);
        return -1;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (k == MAX_LIST || parse_i64(tok, &v[k]) != 0) {
            free(copy);
            free(v);
            return -1;
        }
        k++;
    }
    free(copy);
    if (k == 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = k;
    return 0;
}

static int parse_names(const char *s, char ***out, size_t *n)
{
    char **v = calloc(MAX_LIST, sizeof(*v));
    size_t k = 0;
    const char *p = s;
    if (v == NULL) {
        return -1;
    }
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[PP_MAX_NAME + 1];
        if (k == MAX_LIST || len == 0 || len > PP_MAX_NAME) {
            goto fail;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (!pp_ident_ok(name) || (v[k] = strdup(name)) == NULL) {
            goto fail;
        }
        k++;
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    *out = v;
    *n = k;
    return 0;
fail:
    for (size_t i = 0; i < k; i++) {
        free(v[i]);
    }
    free(v);
    return -1;
}

static int parse_schedule(const char *s, pp_schedule_t *sc)
{
    char *copy = strdup(s), *save = NULL;
    int rv = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rv == 0; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int64_t v;
        if (eq == NULL || parse_i64(eq + 1, &v) != 0 || v < 0) {
            rv = -1;
            break;
        }
        *eq = '\0';
        if (strcmp(tok, "wait") == 0) {
            sc->wait = v;
        } else if (strcmp(tok, "warmup") == 0) {
            sc->warmup = v;
        } else if (strcmp(tok, "active") == 0) {
            sc->active = v;
        } else if (strcmp(tok, "repeat") == 0) {
            sc->repeat = v;
        } else if (strcmp(tok, "skip_first") == 0) {
            sc->skip_first = v;
        } else {
            rv = -1;
        }
    }
    free(copy);
    return sc->active > 0 ? rv : -1;
}

/* ---- tables ---- */

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static void fmt_i64(char *buf, size_t len, int64_t v)
{
    if (v == PP_NONE) {
        snprintf(buf, len, "-");
    } else {
        snprintf(buf, len, "%lld", (long long)v);
    }
}

static void fmt_bytes(char *buf, size_t len, int64_t b)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", v, u[i]);
}

static void fmt_steps(char *buf, size_t len, int64_t first, int64_t last)
{
    if (first == PP_NONE) {
        snprintf(buf, len, "-");
    } else if (last == PP_NONE) {
        snprintf(buf, len, "%lld-", (long long)first);
    } else if (last == first) {
        snprintf(buf, len, "%lld", (long long)first);
    } else {
        snprintf(buf, len, "%lld-%lld", (long long)first, (long long)last);
    }
}

static int cmp_rank(const void *a, const void *b)
{
    const pp_rank_t *x = a, *y = b;
    int c = strcmp(x->node ? x->node : "", y->node ? y->node : "");
    if (c) {
        return c;
    }
    c = strcmp(x->job, y->job);
    if (c) {
        return c;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static void print_status(const pp_status_reply_t *s)
{
    printf("node %s  version %s  save_path %s  windows %lld  ranks %zu\n", s->node, s->version,
           s->save_path, (long long)s->windows, s->ranks_n);
    if (s->ranks_n == 0) {
        printf("no rank registered\n");
        return;
    }
    qsort(s->ranks, s->ranks_n, sizeof(*s->ranks), cmp_rank);
    printf("%-12s %6s %-10s %7s %-16s %8s %7s %9s %-8s %6s\n", "JOB", "RANK", "ROLE", "REPLICA",
           "HOST", "PID", "STEP", "STEP_MS", "STATE", "AGE_S");
    for (size_t i = 0; i < s->ranks_n; i++) {
        const pp_rank_t *r = &s->ranks[i];
        char rep[24], step[24];
        /* a coordinator's ranks: grouped by the node daemon they are on */
        if (r->node && r->node[0] &&
            (i == 0 || !s->ranks[i - 1].node || strcmp(s->ranks[i - 1].node, r->node) != 0)) {
            size_t n = 0;
            while (i + n < s->ranks_n && s->ranks[i + n].node &&
                   strcmp(s->ranks[i + n].node, r->node) == 0) {
                n++;
            }
            printf("node %s: %zu rank(s)\n", r->node, n);
        }
        fmt_i64(rep, sizeof(rep), r->replica_rank);
        fmt_i64(step, sizeof(step), r->step);
        printf("%-12s %6lld %-10s %7s %-16s %8lld %7s %9.1f %-8s %6.1f\n", r->job,
               (long long)r->rank, r->role, rep, r->host, (long long)r->pid, step, r->step_ms,
               r->state, (double)r->age_ms / 1000.0);
    }
}

static void print_windows(const pp_window_t *v, size_t n)
{
    if (n == 0) {
        printf("no window\n");
        return;
    }
    printf("%-4s %-18s %-10s %-10s %-9s %-8s %-8s %-18s %5s %5s %5s %5s %5s %9s\n", "ID", "NAME",
           "JOB", "STATE", "STEPS", "TOOL", "MODE", "ROLES", "RANKS", "OK", "FAIL", "MISS", "TRUNC",
           "BYTES");
    for (size_t i = 0; i < n; i++) {
        const pp_window_t *w = &v[i];
        char steps[48], bytes[24], roles[128] = "";
        fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
        fmt_bytes(bytes, sizeof(bytes), w->bytes);
        for (size_t k = 0; k < w->roles_n; k++) {
            size_t l = strlen(roles);
            snprintf(roles + l, sizeof(roles) - l, "%s%s", k ? "," : "", w->roles[k]);
        }
        printf("%-4lld %-18s %-10s %-10s %-9s %-8s %-8s %-18s %5lld %5lld %5lld %5lld %5lld %9s\n",
               (long long)w->id, w->name, or_dash(w->job), or_dash(w->state), steps,
               or_dash(w->tool), or_dash(w->mode), roles[0] ? roles : "all", (long long)w->selected,
               (long long)w->complete, (long long)w->failed, (long long)w->missed,
               (long long)w->truncated, bytes);
    }
}

static void print_window_detail(const pp_window_t *w)
{
    char steps[48];
    print_windows(w, 1);
    fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
    printf("\npath      %s\n", or_dash(w->path));
    printf("source    %s\n", or_dash(w->source));
    printf("settings  %s\n", or_dash(w->settings));
    if (w->reason) {
        printf("reason    %s\n", w->reason);
    }
    for (size_t i = 0; i < w->warnings_n; i++) {
        printf("warning   %s\n", w->warnings[i]);
    }
    if (w->ranks_n) {
        printf("\n%6s %-10s %7s %-16s %-9s\n", "RANK", "ROLE", "REPLICA", "HOST", "STATE");
        for (size_t i = 0; i < w->ranks_n; i++) {
            char rep[24];
            fmt_i64(rep, sizeof(rep), w->ranks[i].replica_rank);
            printf("%6lld %-10s %7s %-16s %-9s\n", (long long)w->ranks[i].rank, w->ranks[i].role,
                   rep, w->ranks[i].host, w->ranks[i].state);
        }
    }
}

static void print_started(const pp_started_t *s, const char *verb)
{
    for (size_t i = 0; i < s->warnings_n; i++) {
        fprintf(stderr, "warning: %s\n", s->warnings[i]);
    }
    for (size_t i = 0; i < s->windows_n; i++) {
        const pp_window_t *w = &s->windows[i];
        char steps[48];
        fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
        printf("%s window %lld %s: steps %s, %lld rank(s), tool %s, %s -> %s\n", verb,
               (long long)w->id, w->name, steps, (long long)w->selected, w->tool, w->mode,
               or_dash(w->path));
        for (size_t k = 0; k < w->warnings_n; k++) {
            fprintf(stderr, "warning: %s: %s\n", w->name, w->warnings[k]);
        }
    }
    if (s->windows_n == 0) {
        printf("no window %s\n", strcmp(verb, "stopping") == 0 ? "to stop" : "created");
    }
}

/* ---- commands ---- */

static int cmd_status(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"job", required_argument, NULL, 'j'}, {0, 0, 0, 0}};
    pp_msg_t req, rep;
    int ch;
    pp_msg_init(&req, PP_T_status);
    while ((ch = getopt_long(argc, argv, "j:", o, NULL)) != -1) {
        if (ch != 'j') {
            return bad_usage("status: unknown option");
        }
        req.u.status.job = optarg;
    }
    if (optind < argc) {
        return bad_usage("status: unexpected argument '%s'", argv[optind]);
    }
    if (ctl_call(c, &req, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        print_json(&rep);
    } else {
        print_status(&rep.u.status_reply);
    }
    pp_msg_free(&rep);
    return 0;
}

static int query_windows(ctl_t *c, const char *job, int64_t id, pp_msg_t *rep)
{
    pp_msg_t req;
    pp_msg_init(&req, PP_T_windows);
    req.u.windows.job = (char *)job;
    req.u.windows.id = id;
    return ctl_call(c, &req, rep);
}

static int cmd_windows(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"job", required_argument, NULL, 'j'}, {0, 0, 0, 0}};
    const char *job = NULL;
    int64_t id = PP_NONE;
    pp_msg_t rep;
    int ch;
    while ((ch = getopt_long(argc, argv, "j:", o, NULL)) != -1) {
        if (ch != 'j') {
            return bad_usage("windows: unknown option");
        }
        job = optarg;
    }
    if (optind < argc && parse_i64(argv[optind++], &id) != 0) {
        return bad_usage("windows: window id must be a number");
    }
    if (optind < argc) {
        return bad_usage("windows: unexpected argument '%s'", argv[optind]);
    }
    if (query_windows(c, job, id, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        print_json(&rep);
    } else if (id != PP_NONE && rep.u.windows_reply.windows_n == 1) {
        print_window_detail(&rep.u.windows_reply.windows[0]);
    } else {
        print_windows(rep.u.windows_reply.windows, rep.u.windows_reply.windows_n);
    }
    pp_msg_free(&rep);
    return 0;
}

static int cmd_start(ctl_t *c, int argc, char **argv)
{
    enum {
        O_STEPS = 1,
        O_NEXT,
        O_ROUNDUP,
        O_ROLES,
        O_RANKS,
        O_REPLICAS,
        O_PHASES,
        O_DISCRETE,
        O_E2E,
        O_CONT,
        O_TOOL,
        O_LEVEL,
        O_CONTENTS,
        O_SETTINGS,
        O_SCHEDULE,
        O_JOB,
        O_SAVE
    };
    static const struct option o[] = {
        {"steps", required_argument, NULL, O_STEPS},
        {"next", required_argument, NULL, O_NEXT},
        {"roundup", required_argument, NULL, O_ROUNDUP},
        {"roles", required_argument, NULL, O_ROLES},
        {"ranks", required_argument, NULL, O_RANKS},
        {"replica-ranks", required_argument, NULL, O_REPLICAS},
        {"phases", required_argument, NULL, O_PHASES},
        {"discrete", no_argument, NULL, O_DISCRETE},
        {"e2e", no_argument, NULL, O_E2E},
        {"continuous", no_argument, NULL, O_CONT},
        {"tool", required_argument, NULL, O_TOOL},
        {"level", required_argument, NULL, O_LEVEL},
        {"contents", required_argument, NULL, O_CONTENTS},
        {"settings", required_argument, NULL, O_SETTINGS},
        {"schedule", required_argument, NULL, O_SCHEDULE},
        {"job", required_argument, NULL, O_JOB},
        {"save-path", required_argument, NULL, O_SAVE},
        {0, 0, 0, 0},
    };
    pp_msg_t req, rep;
    pp_window_spec_t *s;
    pp_selector_t base;
    char **roles = NULL, **contents = NULL;
    size_t nroles = 0, ncontents = 0;
    const char *level = NULL, *settings = NULL;
    char settings_buf[4096];
    int ch, rv = 2;

    pp_msg_init(&req, PP_T_start);
    s = &req.u.start;
    pp_record_init(&pp_desc_selector, &base);
    base.all_ranks = true;
    while ((ch = getopt_long(argc, argv, "", o, NULL)) != -1) {
        char *colon;
        switch (ch) {
        case O_STEPS:
            if ((colon = strchr(optarg, ':')) != NULL) {
                *colon = '\0';
                if (parse_i64(optarg, &s->start) != 0 ||
                    (colon[1] ? parse_i64(colon + 1, &s->end) != 0 : (s->end = -1, 0))) {
                    *colon = ':';
                    rv = bad_usage("--steps: expected A:B, A: or a list like 2,4");
                    goto out;
                }
                *colon = ':';
            } else if (parse_list(optarg, &s->steps, &s->steps_n) != 0) {
                rv = bad_usage("--steps: expected a list like 2,4 or a range like 5:10");
                goto out;
            }
            break;
        case O_NEXT:
            if (parse_i64(optarg, &s->next) != 0 || s->next < 1) {
                rv = bad_usage("--next: expected a positive number of steps");
                goto out;
            }
            break;
        case O_ROUNDUP:
            if (parse_i64(optarg, &s->roundup) != 0 || s->roundup < 1) {
                rv = bad_usage("--roundup: expected a positive number");
                goto out;
            }
            break;
        case O_ROLES:
            if (parse_names(optarg, &roles, &nroles) != 0) {
                rv = bad_usage("--roles: expected names like actor,rollout");
                goto out;
            }
            break;
        case O_RANKS:
            if (strcmp(optarg, "all") == 0) {
                base.all_ranks = true;
            } else if (parse_list(optarg, &base.ranks, &base.ranks_n) != 0) {
                rv = bad_usage("--ranks: expected all or a list like 0,1");
                goto out;
            } else {
                base.all_ranks = false;
            }
            break;
        case O_REPLICAS:
            if (parse_list(optarg, &base.replica_ranks, &base.replica_ranks_n) != 0) {
                rv = bad_usage("--replica-ranks: expected a list like 0,1");
                goto out;
            }
            if (base.ranks_n == 0) {
                base.all_ranks = false;
            }
            break;
        case O_PHASES:
            if (parse_names(optarg, &base.phases, &base.phases_n) != 0) {
                rv = bad_usage("--phases: expected names like generate,update_actor");
                goto out;
            }
            if (s->mode == NULL) {
                s->mode = strdup("discrete");
            }
            break;
        case O_DISCRETE:
        case O_E2E:
            free(s->mode);
            s->mode = strdup(ch == O_DISCRETE ? "discrete" : "e2e");
            break;
        case O_CONT:
            s->continuous = true;
            break;
        case O_TOOL:
            if (!pp_ident_ok(optarg)) {
                rv = bad_usage("--tool: expected a name like torch or sim");
                goto out;
            }
            s->tool = strdup(optarg);
            break;
        case O_LEVEL:
            if (!pp_ident_ok(optarg)) {
                rv = bad_usage("--level: expected a name like level1");
                goto out;
            }
            level = optarg;
            break;
        case O_CONTENTS:
            if (parse_names(optarg, &contents, &ncontents) != 0) {
                rv = bad_usage("--contents: expected names like cpu,npu");
                goto out;
            }
            break;
        case O_SETTINGS:
            settings = optarg;
            break;
        case O_SCHEDULE:
            if (parse_schedule(optarg, &s->schedule) != 0) {
                rv = bad_usage("--schedule: expected wait=N,warmup=N,active=N(>0),repeat=N,"
                               "skip_first=N");
                goto out;
            }
            break;
        case O_JOB:
            if (!pp_ident_ok(optarg)) {
                rv = bad_usage("--job: expected an identifier");
                goto out;
            }
            s->job = strdup(optarg);
            break;
        case O_SAVE:
            s->save_path = strdup(optarg);
            break;
        default:
            rv = bad_usage("start: unknown option");
            goto out;
        }
    }
    if (optind < argc) {
        rv = bad_usage("start: unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (s->steps_n == 0 && s->start == PP_NONE && s->next == 0) {
        rv = bad_usage("start: give --steps or --next");
        goto out;
    }
    if (settings && (level || contents)) {
        rv = bad_usage("start: give --settings or --level/--contents, not both");
        goto out;
    }
    if (settings) {
        if (settings[0] != '{') {
            rv = bad_usage("--settings: expected a JSON object");
            goto out;
        }
        s->settings = strdup(settings);
    } else if (level || contents) {
        size_t n = (size_t)snprintf(settings_buf, sizeof(settings_buf), "{");
        if (level) {
            n += (size_t)snprintf(settings_buf + n, sizeof(settings_buf) - n, "\"level\":\"%s\"%s",
                                  level, contents ? "," : "");
        }
        if (contents) {
            n += (size_t)snprintf(settings_buf + n, sizeof(settings_buf) - n, "\"contents\":[");
            for (size_t i = 0; i < ncontents && n < sizeof(settings_buf); i++) {
                n += (size_t)snprintf(settings_buf + n, sizeof(settings_buf) - n, "%s\"%s\"",
                                      i ? "," : "", contents[i]);
            }
            n += (size_t)snprintf(settings_buf + n, sizeof(settings_buf) - n, "]");
        }
        if (n + 2 >= sizeof(settings_buf)) {
            rv = bad_usage("start: settings too long");
            goto out;
        }
        snprintf(settings_buf + n, sizeof(settings_buf) - n, "}");
        s->settings = strdup(settings_buf);
    }
    s->source = strdup("profctl");
    /* one selector per role (or one for every role) */
    size_t nsel = nroles ? nroles : 1;
    s->selectors = calloc(nsel, sizeof(*s->selectors));
    s->selectors_n = nsel;
    for (size_t i = 0; i < nsel; i++) {
        if (pp_record_copy(&pp_desc_selector, &s->selectors[i], &base) != 0) {
            rv = die(1, "out of memory");
            goto out;
        }
        if (nroles) {
            s->selectors[i].role = strdup(roles[i]);
        }
    }
    if (ctl_call(c, &req, &rep) != 0) {
        rv = 1;
        goto out;
    }
    if (c->json) {
        print_json(&rep);
    } else {
        print_started(&rep.u.started, "started");
    }
    pp_msg_free(&rep);
    rv = 0;
out:
    for (size_t i = 0; i < nroles; i++) {
        free(roles[i]);
    }
    free(roles);
    for (size_t i = 0; i < ncontents; i++) {
        free(contents[i]);
    }
    free(contents);
    pp_record_free(&pp_desc_selector, &base);
    pp_msg_free(&req);
    return rv;
}

static int cmd_stop(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"job", required_argument, NULL, 'j'}, {0, 0, 0, 0}};
    pp_msg_t req, rep;
    int ch;
    pp_msg_init(&req, PP_T_stop);
    while ((ch = getopt_long(argc, argv, "j:", o, NULL)) != -1) {
        if (ch != 'j') {
            return bad_usage("stop: unknown option");
        }
        req.u.stop.job = optarg;
    }
    if (optind < argc && parse_i64(argv[optind++], &req.u.stop.id) != 0) {
        return bad_usage("stop: window id must be a number");
    }
    if (optind < argc) {
        return bad_usage("stop: unexpected argument '%s'", argv[optind]);
    }
    if (ctl_call(c, &req, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        print_json(&rep);
    } else {
        print_started(&rep.u.started, "stopping");
    }
    pp_msg_free(&rep);
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmd_wait(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"timeout", required_argument, NULL, 't'}, {0, 0, 0, 0}};
    int64_t id, timeout_s = 600;
    int ch;
    bool tty = isatty(STDERR_FILENO);
    while ((ch = getopt_long(argc, argv, "t:", o, NULL)) != -1) {
        if (ch != 't' || parse_i64(optarg, &timeout_s) != 0 || timeout_s < 0) {
            return bad_usage("wait: --timeout expects seconds");
        }
    }
    if (optind >= argc || parse_i64(argv[optind], &id) != 0) {
        return bad_usage("wait: give a window id");
    }
    if (optind + 1 < argc) {
        return bad_usage("wait: unexpected argument '%s'", argv[optind + 1]);
    }
    int64_t deadline = now_ms() + timeout_s * 1000;
    char last[256] = "";
    for (;;) {
        pp_msg_t rep;
        if (query_windows(c, NULL, id, &rep) != 0) {
            return 1;
        }
        if (rep.u.windows_reply.windows_n != 1) {
            pp_msg_free(&rep);
            return die(1, "no window %lld", (long long)id);
        }
        pp_window_t *w = &rep.u.windows_reply.windows[0];
        char line[256];
        snprintf(line, sizeof(line), "%s: %s, %lld/%lld rank(s) reported, %lld complete", w->name,
                 w->state, (long long)w->reported, (long long)w->selected, (long long)w->complete);
        if (tty && strcmp(line, last) != 0) {
            fprintf(stderr, "\r%s   ", line);
            snprintf(last, sizeof(last), "%s", line);
        }
        if (strcmp(w->state, "done") == 0) {
            if (tty) {
                fprintf(stderr, "\n");
            }
            int rv = 0;
            if (c->json) {
                print_json(&rep);
            } else {
                printf("%s done: %lld complete, %lld failed, %lld missed, %lld truncated; "
                       "manifest %s/manifest.json\n",
                       w->name, (long long)w->complete, (long long)w->failed, (long long)w->missed,
                       (long long)w->truncated, or_dash(w->path));
            }
            if (w->failed || w->missed || w->truncated) {
                fprintf(stderr, "profctl: %s: not every capture is complete (see the manifest)\n",
                        w->name);
                rv = 3;
            }
            pp_msg_free(&rep);
            return rv;
        }
        if (strcmp(w->state, "cancelled") == 0) {
            if (tty) {
                fprintf(stderr, "\n");
            }
            int rv = die(1, "%s was cancelled%s%s", w->name, w->reason ? ": " : "",
                         w->reason ? w->reason : "");
            pp_msg_free(&rep);
            return rv;
        }
        if (w->selected == 0) {
            if (tty) {
                fprintf(stderr, "\n");
            }
            int rv = die(1, "%s selects no registered rank: nothing to wait for", w->name);
            pp_msg_free(&rep);
            return rv;
        }
        pp_msg_free(&rep);
        if (now_ms() >= deadline) {
            if (tty) {
                fprintf(stderr, "\n");
            }
            return die(1, "timed out after %llds waiting for window %lld", (long long)timeout_s,
                       (long long)id);
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 16384;
            if (cap > PP_MAX_MSG_DEFAULT) {
                free(buf);
                fclose(f);
                errno = EFBIG;
                return -1;
            }
            char *v = realloc(buf, cap);
            if (v == NULL) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = v;
        }
        size_t k = fread(buf + n, 1, 4096, f);
        n += k;
        if (k == 0) {
            break;
        }
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int cmd_apply(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {{"job", required_argument, NULL, 'j'}, {0, 0, 0, 0}};
    pp_msg_t req, rep;
    char *text;
    size_t len;
    int ch;
    pp_msg_init(&req, PP_T_apply);
    while ((ch = getopt_long(argc, argv, "j:", o, NULL)) != -1) {
        if (ch != 'j') {
            return bad_usage("apply: unknown option");
        }
        req.u.apply.job = optarg;
    }
    if (optind >= argc) {
        return bad_usage("apply: give a YAML file");
    }
    const char *file = argv[optind++];
    if (read_file(file, &text, &len) != 0) {
        return die(1, "cannot read %s: %s", file, strerror(errno));
    }
    if (strlen(text) != len) {
        free(text);
        return die(1, "%s is not a text file", file);
    }
    req.u.apply.file = (char *)file;
    req.u.apply.yaml = text;
    req.u.apply.overrides = argv + optind;
    req.u.apply.overrides_n = (size_t)(argc - optind);
    int rv = ctl_call(c, &req, &rep);
    free(text);
    if (rv != 0) {
        return 1;
    }
    if (c->json) {
        print_json(&rep);
    } else {
        print_started(&rep.u.started, "applied");
    }
    pp_msg_free(&rep);
    return 0;
}

int main(int argc, char **argv)
{
    enum { O_TLS_CA = 256, O_TLS_CERT, O_TLS_KEY, O_TLS_NAME };
    static const struct option o[] = {
        {"url", required_argument, NULL, 'u'},
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, 't'},
        {"tls-ca", required_argument, NULL, O_TLS_CA},
        {"tls-cert", required_argument, NULL, O_TLS_CERT},
        {"tls-key", required_argument, NULL, O_TLS_KEY},
        {"tls-server-name", required_argument, NULL, O_TLS_NAME},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0, 0, 0, 0},
    };
    ctl_t c;
    int ch, rv;
    int64_t t;

    memset(&c, 0, sizeof(c));
    c.timeout_ms = 10000;
    c.tls.ca = getenv("PROFD_TLS_CA");
    c.tls.cert = getenv("PROFD_TLS_CERT");
    c.tls.key = getenv("PROFD_TLS_KEY");
    c.tls.server_name = getenv("PROFD_TLS_SERVER_NAME");
    while ((ch = getopt_long(argc, argv, "+u:jt:hV", o, NULL)) != -1) {
        switch (ch) {
        case 'u':
            snprintf(c.url, sizeof(c.url), "%s", optarg);
            break;
        case 'j':
            c.json = true;
            break;
        case O_TLS_CA:
            c.tls.ca = optarg;
            break;
        case O_TLS_CERT:
            c.tls.cert = optarg;
            break;
        case O_TLS_KEY:
            c.tls.key = optarg;
            break;
        case O_TLS_NAME:
            c.tls.server_name = optarg;
            break;
        case 't':
            if (parse_i64(optarg, &t) != 0 || t < 1) {
                return bad_usage("--timeout expects a positive number of seconds");
            }
            c.timeout_ms = (int)(t * 1000);
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("profctl %s\n", PROFD_VERSION_STRING);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return bad_usage("no command given");
    }
    if (c.url[0] == '\0') {
        default_url(c.url, sizeof(c.url));
    }
    const char *cmd = argv[optind];
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    optind = 0; /* each command parses its own options (0: full reset in glibc) */
    if (strcmp(cmd, "status") == 0) {
        rv = cmd_status(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "windows") == 0) {
        rv = cmd_windows(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "start") == 0) {
        rv = cmd_start(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "stop") == 0) {
        rv = cmd_stop(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "wait") == 0) {
        rv = cmd_wait(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "apply") == 0) {
        rv = cmd_apply(&c, sub_argc, sub_argv);
    } else if (strcmp(cmd, "help") == 0) {
        usage(stdout);
        rv = 0;
    } else {
        rv = bad_usage("unknown command '%s'", cmd);
    }
    if (c.open) {
        nng_close(c.sock);
    }
    pt_tls_config_free(c.tls_cfg);
    return rv;
}
