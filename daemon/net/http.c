// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A small HTTP endpoint on the loop (see http.h). */
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "http.h"
#include "profd/errors.h"

#define REQ_MAX 8192 /* request line and headers */

typedef struct conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t wr;
    pd_http_t *h;
    struct sockaddr_storage peer;
    char buf[REQ_MAX];
    size_t len;
    char *out; /* the answer being written */
    bool closing, answered;
    int open; /* handles not closed yet */
    struct conn *prev, *next;
} conn_t;

struct pd_http {
    pd_loop_t *loop;
    uv_tcp_t srv;
    pd_http_limits_t lim;
    pd_http_body_fn fn;
    void *arg;
    char path[128];
    char content_type[96];
    conn_t *conns;
    int nconns;
    long served, refused;
    bool closing;
    int open; /* handles not closed yet: the listener's and the connections' */
};

static void maybe_free(pd_http_t *h)
{
    if (h->closing && h->open == 0) {
        free(h);
    }
}

static void conn_closed(uv_handle_t *hd)
{
    conn_t *c = hd->data;
    pd_http_t *h = c->h;
    if (--c->open > 0) {
        return;
    }
    free(c->out);
    free(c);
    h->open--;
    maybe_free(h);
}

static void conn_close(conn_t *c)
{
    if (c->closing) {
        return;
    }
    c->closing = true;
    pd_http_t *h = c->h;
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        h->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    h->nconns--;
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, conn_closed);
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void on_timeout(uv_timer_t *t)
{
    conn_close(t->data); /* idle, or too slow a request */
}

static void on_written(uv_write_t *wr, int status)
{
    (void)status;
    conn_close(wr->data);
}

static void send_answer(conn_t *c, int status, const char *reason, const char *ctype,
                        const char *body, size_t len)
{
    char head[512];
    int k = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, reason, ctype ? ctype : "text/plain; charset=utf-8", len);
    c->answered = true;
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (k < 0 || (c->out = malloc((size_t)k + len)) == NULL) {
        conn_close(c);
        return;
    }
    memcpy(c->out, head, (size_t)k);
    if (len) {
        memcpy(c->out + k, body, len);
    }
    uv_buf_t b = uv_buf_init(c->out, (unsigned)((size_t)k + len));
    c->wr.data = c;
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
        conn_close(c);
    }
}

static void send_error(conn_t *c, int status, const char *reason)
{
    char body[64];
    int n = snprintf(body, sizeof(body), "%d %s\n", status, reason);
    send_answer(c, status, reason, NULL, body, (size_t)n);
}

/* A whole request head in c->buf: answer it. */
static void handle(conn_t *c)
{
    pd_http_t *h = c->h;
    char *sp1 = memchr(c->buf, ' ', c->len);
    char *sp2 = sp1 ? memchr(sp1 + 1, ' ', c->len - (size_t)(sp1 + 1 - c->buf)) : NULL;
    char *eol = memchr(c->buf, '\r', c->len);
    if (sp1 == NULL || sp2 == NULL || eol == NULL || sp2 > eol) {
        send_error(c, 400, "Bad Request");
        return;
    }
    size_t mlen = (size_t)(sp1 - c->buf), tlen = (size_t)(sp2 - sp1 - 1);
    char *q = memchr(sp1 + 1, '?', tlen);
    size_t plen = q ? (size_t)(q - sp1 - 1) : tlen;
    if (plen != strlen(h->path) || memcmp(sp1 + 1, h->path, plen) != 0) {
        send_error(c, 404, "Not Found");
        return;
    }
    if (mlen != 3 || memcmp(c->buf, "GET", 3) != 0) {
        send_error(c, 405, "Method Not Allowed");
        return;
    }
    char *body = NULL;
    size_t len = 0;
    int rv = h->fn(h->arg, &body, &len);
    h->served++;
    if (rv == 0) {
        send_answer(c, 200, "OK", h->content_type, body, len);
    } else {
        send_error(c, 500, "Internal Server Error");
    }
    free(body);
}

static void on_alloc(uv_handle_t *hd, size_t suggested, uv_buf_t *b)
{
    conn_t *c = hd->data;
    (void)suggested;
    *b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof(c->buf) - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    conn_t *c = s->data;
    (void)b;
    if (n < 0) {
        conn_close(c);
        return;
    }
    if (n == 0 || c->answered) {
        return;
    }
    size_t from = c->len > 3 ? c->len - 3 : 0;
    c->len += (size_t)n;
    for (size_t i = from; i + 4 <= c->len; i++) {
        if (memcmp(c->buf + i, "\r\n\r\n", 4) == 0) {
            handle(c);
            return;
        }
    }
    if (c->len == sizeof(c->buf)) {
        send_error(c, 431, "Request Header Fields Too Large");
    }
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return false;
    }
    if (a->ss_family == AF_INET) {
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    }
    if (a->ss_family == AF_INET6) {
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    }
    return true;
}

static void on_connection(uv_stream_t *srv, int status)
{
    pd_http_t *h = srv->data;
    if (status < 0 || h->closing) {
        return;
    }
    conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return; /* libuv accepts it later (or closes it out of descriptors) */
    }
    c->h = h;
    uv_tcp_init(&h->loop->uv, &c->tcp);
    uv_timer_init(&h->loop->uv, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->open = 2;
    h->open++;
    c->next = h->conns;
    if (h->conns) {
        h->conns->prev = c;
    }
    h->conns = c;
    h->nconns++;
    if (uv_accept(srv, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    int alen = sizeof(c->peer);
    uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&c->peer, &alen);
    int same = 0;
    for (conn_t *o = h->conns; o; o = o->next) {
        same += o != c && same_host(&o->peer, &c->peer);
    }
    if ((h->lim.max_conns > 0 && h->nconns > h->lim.max_conns) ||
        (h->lim.max_per_peer > 0 && same >= h->lim.max_per_peer)) {
        h->refused++;
        conn_close(c); /* at once: never held, never read */
        return;
    }
    uv_timer_start(&c->timer, on_timeout, h->lim.idle_ms > 0 ? (uint64_t)h->lim.idle_ms : 10000, 0);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
    }
}

static void srv_closed(uv_handle_t *hd)
{
    pd_http_t *h = hd->data;
    h->open--;
    maybe_free(h);
}

int pd_http_open(pd_http_t **out, pd_loop_t *loop, const char *url, const char *path,
                 const char *content_type, const pd_http_limits_t *lim, pd_http_body_fn fn,
                 void *arg, char *err, size_t errlen)
{
    char host[256], port[16];
    const char *p = strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
    const char *colon = p ? strrchr(p, ':') : NULL;
    const char *end = colon ? colon + 1 + strcspn(colon + 1, "/") : NULL;
    size_t hl = colon ? (size_t)(colon - p) : 0;
    if (p && hl >= 2 && p[0] == '[' && p[hl - 1] == ']') {
        p++;
        hl -= 2;
    }
    if (p == NULL || colon == NULL || hl == 0 || hl >= sizeof(host) || end == colon + 1 ||
        (size_t)(end - colon - 1) >= sizeof(port) || (*end != '\0' && strcmp(end, "/") != 0)) {
        snprintf(err, errlen, "listen.metrics: expected http://HOST:PORT, found '%.200s'", url);
        return PROFD_EINVAL;
    }
    memcpy(host, p, hl);
    host[hl] = '\0';
    memcpy(port, colon + 1, (size_t)(end - colon - 1));
    port[end - colon - 1] = '\0';
    struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rv = getaddrinfo(host, port, &hints, &ai);
    if (rv != 0) {
        snprintf(err, errlen, "listen.metrics %s: %s", url, gai_strerror(rv));
        return PROFD_EINVAL;
    }
    pd_http_t *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        freeaddrinfo(ai);
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    h->loop = loop;
    h->lim = *lim;
    h->fn = fn;
    h->arg = arg;
    snprintf(h->path, sizeof(h->path), "%s", path);
    snprintf(h->content_type, sizeof(h->content_type), "%s", content_type);
    uv_tcp_init(&loop->uv, &h->srv);
    h->srv.data = h;
    h->open = 1;
    rv = uv_tcp_bind(&h->srv, ai->ai_addr, 0);
    freeaddrinfo(ai);
    if (rv == 0) {
        rv = uv_listen((uv_stream_t *)&h->srv, 128, on_connection);
    }
    if (rv != 0) {
        snprintf(err, errlen, "listen.metrics %s: %s", url, uv_strerror(rv));
        h->closing = true;
        uv_close((uv_handle_t *)&h->srv, srv_closed);
        return PROFD_EIO;
    }
    *out = h;
    return 0;
}

void pd_http_close(pd_http_t *h)
{
    if (h == NULL || h->closing) {
        return;
    }
    h->closing = true;
    while (h->conns) {
        conn_close(h->conns);
    }
    uv_close((uv_handle_t *)&h->srv, srv_closed);
}

long pd_http_served(const pd_http_t *h)
{
    return h ? h->served : 0;
}

long pd_http_refused(const pd_http_t *h)
{
    return h ? h->refused : 0;
}
