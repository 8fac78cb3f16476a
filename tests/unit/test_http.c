// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * net/http.c, the metrics endpoint, against what http.h promises: GET on
 * its one path answered with the body the loop thread makes (500 when that
 * fails), any other path 404, another method 405, a request line it cannot
 * read 400, a head over 8 KiB 431, each answer closing its connection;
 * connections past max_conns or max_per_peer closed as they arrive, one
 * without a whole head closed after idle_ms; a URL not of the form
 * http://HOST:PORT refused with the reason. The loop runs in this thread:
 * plain sockets connect to a port on 127.0.0.1 and the loop is turned until
 * what the test waits for happened.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "http.h"
#include "loop.h"
#include "profd/errors.h"
#include "pd_skip.h"
#include "loop_pump.h"

#define BODY  "profd_info 1\n"
#define CTYPE "text/plain; version=0.0.4; charset=utf-8"
#define PATH  "/metrics"

/* What the endpoint sends on fd until it closes it (5 s at most), as text;
 * its length, or -1 if the connection was reset. */
typedef struct reader {
    int fd;
    char buf[16384];
    size_t len;
    bool eof, reset;
} reader_t;

typedef struct fixture {
    pd_loop_t loop;
    pd_http_t *h;
    int port;
    char url[64];
    pd_http_limits_t lim;
    char ok[512]; /* the answer of a GET on PATH */
    int calls;    /* bodies asked for */
    int fail;     /* what the body function returns */
    reader_t r;   /* the answer read last */
} fixture_t;

static int body_fn(void *arg, char **body, size_t *len)
{
    fixture_t *f = arg;
    f->calls++;
    if (f->fail) {
        return f->fail;
    }
    *body = strdup(BODY);
    *len = strlen(BODY);
    return 0;
}

/* A port on 127.0.0.1 free a moment ago. */
static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* Serve PATH on a free port with these limits; the test's fixture. */
static fixture_t *serve(void **state, int max_conns, int max_per_peer, int64_t idle_ms)
{
    fixture_t *f = *state;
    char err[256] = "";
    f->lim = (pd_http_limits_t){max_conns, max_per_peer, idle_ms};
    snprintf(f->ok, sizeof(f->ok),
             "HTTP/1.1 200 OK\r\nContent-Type: " CTYPE "\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n" BODY,
             strlen(BODY));
    f->port = free_port();
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", f->port);
    int rv =
        pd_http_open(&f->h, &f->loop, f->url, PATH, CTYPE, &f->lim, body_fn, f, err, sizeof(err));
    if (rv != 0) {
        fail_msg("pd_http_open %s: %d %s", f->url, rv, err);
    }
    return f;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_int_equal(pd_loop_init(&f->loop), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    pd_http_close(f->h);
    assert_int_equal(pd_loop_fini(&f->loop), 0); /* every handle closed */
    free(f);
    return 0;
}

/* Turn the loop for `ms` at most, or until done(arg) says so. */
static void pump(fixture_t *f, int ms, bool (*done)(void *arg), void *arg)
{
    loop_pump(&f->loop, ms, done, arg);
}

static int connect_to(const fixture_t *f)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)f->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    return fd;
}

static void send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, 0);
        assert_true(n > 0);
        buf += n;
        len -= (size_t)n;
    }
}

static bool read_some(void *arg)
{
    reader_t *r = arg;
    for (;;) {
        ssize_t n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len, 0);
        if (n > 0) {
            r->len += (size_t)n;
            r->buf[r->len] = '\0';
            continue;
        }
        if (n == 0) {
            r->eof = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
            r->reset = true;
        }
        return r->eof || r->reset;
    }
}

static const char *answer(fixture_t *f, int fd)
{
    reader_t *r = &f->r;
    memset(r, 0, sizeof(*r));
    r->fd = fd;
    pump(f, 5000, read_some, r);
    if (!r->eof) {
        fail_msg("the connection was %s", r->reset ? "reset" : "not closed within 5 s");
    }
    close(fd);
    return r->buf;
}

/* One request on a connection of its own; the whole answer. */
static const char *ask(fixture_t *f, const char *req)
{
    int fd = connect_to(f);
    send_all(fd, req, strlen(req));
    return answer(f, fd);
}

static void expect_error(fixture_t *f, const char *req, const char *status, const char *reason)
{
    char want[512], body[128];
    snprintf(body, sizeof(body), "%s %s\n", status, reason);
    snprintf(want, sizeof(want),
             "HTTP/1.1 %s %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
             "%zu\r\nConnection: close\r\n\r\n%s",
             status, reason, strlen(body), body);
    assert_string_equal(ask(f, req), want);
}

/* A piece of a request on fd, then the loop turned for 100 ms. */
static void send_piece(fixture_t *f, int fd, const char *piece)
{
    send_all(fd, piece, strlen(piece));
    pump(f, 100, NULL, NULL);
}

/* What the endpoint counted: requests answered, connections refused. */
static void assert_counts(const fixture_t *f, long served, long refused)
{
    assert_int_equal(pd_http_served(f->h), served);
    assert_int_equal(pd_http_refused(f->h), refused);
}

/* ---- answers ---- */

static void test_http_get_answers_the_body(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    assert_string_equal(ask(f, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), f->ok);
    /* a query string is not part of the path; HTTP/1.0 is answered alike */
    assert_string_equal(ask(f, "GET /metrics?name[]=up HTTP/1.0\r\n\r\n"), f->ok);
    assert_int_equal(f->calls, 2);
    assert_counts(f, 2, 0);
}

static void test_http_head_in_pieces(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    /* the blank line split across reads: found where the pieces meet */
    int fd = connect_to(f);
    send_piece(f, fd, "GET /metrics HTTP/1.1\r\nHost: x\r");
    assert_int_equal(f->calls, 0); /* not a whole head yet */
    send_piece(f, fd, "\n\r");
    assert_int_equal(f->calls, 0);
    send_all(fd, "\n", 1);
    assert_string_equal(answer(f, fd), f->ok);
    assert_int_equal(f->calls, 1);
}

static void test_http_refusals(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    expect_error(f, "GET /metricsx HTTP/1.1\r\n\r\n", "404", "Not Found");
    expect_error(f, "GET / HTTP/1.1\r\n\r\n", "404", "Not Found");
    expect_error(f, "GET /metric HTTP/1.1\r\n\r\n", "404", "Not Found");
    expect_error(f, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "405",
                 "Method Not Allowed");
    expect_error(f, "HEAD /metrics HTTP/1.1\r\n\r\n", "405", "Method Not Allowed");
    expect_error(f, "GETX /metrics HTTP/1.1\r\n\r\n", "405", "Method Not Allowed");
    /* no version: the second space is past the line's end */
    expect_error(f, "GET /metrics\r\nHost: a b\r\n\r\n", "400", "Bad Request");
    expect_error(f, "nonsense\r\n\r\n", "400", "Bad Request");
    expect_error(f, "\r\n\r\n", "400", "Bad Request");
    assert_int_equal(f->calls, 0); /* no body made for any of them */
    assert_int_equal(pd_http_served(f->h), 0);
}

static void test_http_body_failure_is_500(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    f->fail = PROFD_ENOMEM;
    expect_error(f, "GET /metrics HTTP/1.1\r\n\r\n", "500", "Internal Server Error");
    assert_int_equal(f->calls, 1);
    f->fail = 0; /* and serves again */
    assert_string_equal(ask(f, "GET /metrics HTTP/1.1\r\n\r\n"), f->ok);
    assert_int_equal(pd_http_served(f->h), 2);
}

/* 8 KiB of head at most: exactly 8192 bytes with the blank line at their
 * end is answered; 8192 bytes without one are 431. */
static void test_http_head_limit(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    static char req[8192 + 1];
    const char *line = "GET /metrics HTTP/1.1\r\nX-Pad: ";
    size_t k = strlen(line);
    memcpy(req, line, k);
    memset(req + k, 'a', sizeof(req) - 1 - k);
    memcpy(req + 8192 - 4, "\r\n\r\n", 4);
    req[8192] = '\0';
    assert_int_equal(strlen(req), 8192);
    assert_string_equal(ask(f, req), f->ok);

    memset(req + 8192 - 4, 'a', 4); /* no blank line in the 8 KiB */
    expect_error(f, req, "431", "Request Header Fields Too Large");
    assert_int_equal(f->calls, 1);
}

/* ---- connection limits ---- */

typedef struct refused {
    fixture_t *f;
    long want;
} refused_t;

static bool refused_reached(void *arg)
{
    refused_t *w = arg;
    return pd_http_refused(w->f->h) >= w->want;
}

/* Turns the loop until `want` connections were refused (5 s at most). */
static void wait_refused(fixture_t *f, long want)
{
    refused_t w = {f, want};
    pump(f, 5000, refused_reached, &w);
    assert_int_equal(pd_http_refused(f->h), want);
}

/* A GET of PATH on the open connection fd; the whole answer. */
static const char *get_on(fixture_t *f, int fd)
{
    send_all(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25);
    return answer(f, fd);
}

static void test_http_max_conns(void **state)
{
    fixture_t *f = serve(state, 2, 0, 0);
    int a = connect_to(f), b = connect_to(f);
    pump(f, 200, NULL, NULL);
    assert_int_equal(pd_http_refused(f->h), 0);
    int c = connect_to(f); /* the third: closed as it arrives, never read */
    wait_refused(f, 1);
    assert_string_equal(answer(f, c), "");
    /* the two held are served */
    assert_string_equal(get_on(f, a), f->ok);
    /* one gone: room for a new one */
    assert_string_equal(ask(f, "GET /metrics HTTP/1.1\r\n\r\n"), f->ok);
    assert_string_equal(get_on(f, b), f->ok);
    assert_counts(f, 3, 1);
}

static void test_http_max_per_peer(void **state)
{
    fixture_t *f = serve(state, 0, 1, 0);
    int a = connect_to(f);
    pump(f, 200, NULL, NULL);
    int b = connect_to(f); /* a second from 127.0.0.1 */
    wait_refused(f, 1);
    assert_string_equal(answer(f, b), "");
    assert_string_equal(get_on(f, a), f->ok);
    assert_int_equal(pd_http_served(f->h), 1);
}

/* A connection without a whole head is closed once idle_ms passed: not
 * answered, not before. */
static void test_http_idle_closed(void **state)
{
    fixture_t *f = serve(state, 0, 0, 150);
    int64_t t0 = now_ms();
    int fd = connect_to(f);
    send_all(fd, "GET /metr", 9);
    assert_string_equal(answer(f, fd), "");
    assert_true(now_ms() - t0 >= 150);
    assert_int_equal(f->calls, 0);
    assert_counts(f, 0, 0); /* closed idle, not refused */
}

/* Closing the endpoint with a connection open: the connection is closed
 * (http.h says requests waiting are answered 503: a head not yet whole is
 * not answered at all, and a whole one is answered at once). */
static void test_http_close_with_connection_open(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    int fd = connect_to(f);
    send_piece(f, fd, "GET /metrics HTTP/1.1\r\n");
    pd_http_close(f->h);
    f->h = NULL;
    assert_string_equal(answer(f, fd), "");
    assert_int_equal(f->calls, 0);
    pd_http_close(NULL); /* fine */
    assert_int_equal(pd_http_served(NULL), 0);
    assert_int_equal(pd_http_refused(NULL), 0);
}

/* ---- URLs ---- */

static void test_http_bad_urls(void **state)
{
    fixture_t *f = *state;
    static const char *bad[] = {
        "https://127.0.0.1:9", "127.0.0.1:9",        "http://127.0.0.1",
        "http://:9",           "http://127.0.0.1:",  "http://127.0.0.1:9/x",
        "http://[]:9",         "http://127.0.0.1:/", "http://127.0.0.1:123456789012345678",
    };
    pd_http_t *h = (pd_http_t *)0x1;
    char err[256], want[300];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(
            pd_http_open(&h, &f->loop, bad[i], PATH, CTYPE, &f->lim, body_fn, f, err, sizeof(err)),
            PROFD_EINVAL);
        snprintf(want, sizeof(want), "listen.metrics: expected http://HOST:PORT, found '%s'",
                 bad[i]);
        assert_string_equal(err, want);
        assert_ptr_equal(h, (pd_http_t *)0x1); /* untouched */
    }
}

static void test_http_port_in_use(void **state)
{
    fixture_t *f = serve(state, 0, 0, 0);
    pd_http_t *h2 = NULL;
    char err[256], want[300], url[80];
    /* a trailing slash is accepted; the port is taken */
    snprintf(url, sizeof(url), "%s/", f->url);
    assert_int_equal(
        pd_http_open(&h2, &f->loop, url, PATH, CTYPE, &f->lim, body_fn, f, err, sizeof(err)),
        PROFD_EIO);
    snprintf(want, sizeof(want), "listen.metrics %s: address already in use", url);
    assert_string_equal(err, want);
    assert_null(h2);
    /* the first still serves */
    assert_string_equal(ask(f, "GET /metrics HTTP/1.1\r\n\r\n"), f->ok);
}

int main(void)
{
    return PD_RUN_EACH(setup, teardown, test_http_get_answers_the_body, test_http_head_in_pieces,
                       test_http_refusals, test_http_body_failure_is_500, test_http_head_limit,
                       test_http_max_conns, test_http_max_per_peer, test_http_idle_closed,
                       test_http_close_with_connection_open, test_http_bad_urls,
                       test_http_port_in_use);
}
