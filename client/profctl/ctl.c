// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl's connection, messages and argument helpers (see profctl.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"

#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>

#include "rundir.h"

int ctl_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "profctl: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return code;
}

int ctl_usage(const ctl_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "profctl: ");
    vfprintf(stderr, fmt, ap);
    if (c && c->cmd) {
        fprintf(stderr, "\n(see profctl %s --help)\n", c->cmd->name);
    } else {
        fprintf(stderr, "\n(see profctl --help)\n");
    }
    va_end(ap);
    return 2;
}

int ctl_help(const ctl_t *c)
{
    fputs(c->cmd->help, stdout);
    return 0;
}

void ctl_default_url(char *buf, size_t len)
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
        return ctl_die(1, "cannot open a socket: %s", nng_strerror(rv));
    }
    c->open = true;
    nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
    nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, 64u << 20);
    if ((rv = nng_dialer_create(&d, c->sock, c->url)) != 0) {
        return ctl_die(1, "invalid address %s: %s", c->url, nng_strerror(rv));
    }
    if (pt_tls_url(c->url)) {
        if ((c->tls_cfg = pt_tls_config(&c->tls, false, err, sizeof(err))) == NULL) {
            return ctl_die(1, "%s: %s (see --tls-ca, --tls-cert, --tls-key)", c->url, err);
        }
        nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, c->tls_cfg);
    }
    if ((rv = nng_dialer_start(d, 0)) != 0) {
        if (pt_tls_url(c->url) && (rv == NNG_ECRYPTO || rv == NNG_EPEERAUTH || rv == NNG_ECLOSED ||
                                   rv == NNG_ECONNRESET || rv == NNG_ECONNSHUT)) {
            return ctl_die(1,
                           "cannot reach profd at %s: %s (TLS: does the daemon trust this "
                           "client's certificate, and does its certificate chain to --tls-ca "
                           "and name the host?)",
                           c->url, nng_strerror(rv));
        }
        return ctl_die(1, "cannot reach profd at %s: %s (is profd running?)", c->url,
                       nng_strerror(rv));
    }
    return 0;
}

static void aio_done(void *arg)
{
    atomic_store((_Atomic bool *)arg, true);
}

/* Wait for the aio's operation, started with a timeout of timeout_ms; past
 * it by 500 ms, cancel it (again every 500 ms): libnng 1.5.2 was seen to
 * lose an aio's timeout, and profctl would then wait forever for a daemon
 * that never answers. */
static void aio_wait_bounded(nng_aio *aio, _Atomic bool *done, int timeout_ms)
{
    nng_time overdue = nng_clock() + (nng_time)(timeout_ms > 0 ? timeout_ms : 0) + 500;
    while (timeout_ms > 0 && !atomic_load(done)) {
        if (nng_clock() >= overdue) {
            nng_aio_cancel(aio);
            overdue = nng_clock() + 500;
        }
        nng_msleep(5);
    }
    nng_aio_wait(aio);
}

/* One request and its reply on a context of their own; quiet: say nothing
 * when it fails. */
static int exchange(ctl_t *c, const char *buf, size_t len, nng_msg **out, bool quiet)
{
    nng_msg *m;
    nng_aio *aio;
    nng_ctx ctx;
    _Atomic bool done = false;
    int rv;
    if (nng_aio_alloc(&aio, aio_done, &done) != 0 || nng_msg_alloc(&m, 0) != 0 ||
        nng_msg_append(m, buf, len) != 0) {
        return ctl_die(1, "out of memory");
    }
    nng_aio_set_msg(aio, m);
    nng_aio_set_timeout(aio, c->timeout_ms);
    nng_ctx_open(&ctx, c->sock);
    nng_ctx_send(ctx, aio);
    aio_wait_bounded(aio, &done, c->timeout_ms);
    if ((rv = nng_aio_result(aio)) != 0) {
        nng_msg_free(nng_aio_get_msg(aio));
        nng_aio_free(aio);
        nng_ctx_close(ctx);
        return quiet ? 1 : ctl_die(1, "cannot send to %s: %s", c->url, nng_strerror(rv));
    }
    atomic_store(&done, false);
    nng_ctx_recv(ctx, aio);
    aio_wait_bounded(aio, &done, c->timeout_ms);
    if ((rv = nng_aio_result(aio)) != 0) {
        nng_aio_free(aio);
        nng_ctx_close(ctx);
        return quiet ? 1 : ctl_die(1, "no reply from %s: %s", c->url, nng_strerror(rv));
    }
    *out = nng_aio_get_msg(aio);
    nng_aio_free(aio);
    nng_ctx_close(ctx);
    return 0;
}

/* One request and its reply; `quiet`: failures are not printed. */
static int call(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep, bool quiet)
{
    char *buf, err[256];
    size_t len;
    nng_msg *m = NULL;
    if (!c->open && ctl_connect(c) != 0) {
        return 1;
    }
    if (pp_msg_encode(req, &buf, &len) != 0) {
        return quiet ? 1 : ctl_die(1, "cannot encode the request");
    }
    int rv = exchange(c, buf, len, &m, quiet);
    free(buf);
    if (rv != 0) {
        return 1;
    }
    rv = pp_msg_decode(nng_msg_body(m), nng_msg_len(m), 64u << 20, rep, err, sizeof(err));
    nng_msg_free(m);
    if (rv != 0) {
        return quiet ? 1 : ctl_die(1, "bad reply from profd: %s", err);
    }
    if (rep->type == PP_T_error) {
        if (!quiet) {
            ctl_die(1, "%s (%s)", rep->u.error.message ? rep->u.error.message : "error",
                    rep->u.error.name ? rep->u.error.name : "?");
        }
        pp_msg_free(rep);
        return 1;
    }
    return 0;
}

int ctl_call_quiet(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep)
{
    return call(c, req, rep, true);
}

int ctl_call(ctl_t *c, const pp_msg_t *req, pp_msg_t *rep)
{
    return call(c, req, rep, false);
}

int ctl_call_started(ctl_t *c, const pp_msg_t *req, const char *verb)
{
    pp_msg_t rep;
    if (ctl_call(c, req, &rep) != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        ctl_print_started(&rep.u.started, verb);
    }
    pp_msg_free(&rep);
    return 0;
}

void ctl_close(ctl_t *c)
{
    if (c->open) {
        nng_close(c->sock);
        c->open = false;
    }
    pt_tls_config_free(c->tls_cfg);
    c->tls_cfg = NULL;
}

void ctl_print_json(const pp_msg_t *m)
{
    char *buf;
    if (pp_record_encode(pp_type_desc(m->type), &m->u, true, &buf, NULL) == 0) {
        printf("%s\n", buf);
        free(buf);
    }
}

void ctl_print_json_line(const pp_msg_t *m)
{
    char *buf;
    if (pp_record_encode(pp_type_desc(m->type), &m->u, false, &buf, NULL) == 0) {
        printf("%s\n", buf);
        free(buf);
    }
}

int ctl_parse_i64(const char *s, int64_t *out)
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
