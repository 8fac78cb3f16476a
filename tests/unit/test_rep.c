// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * net/rep.c, the reply endpoint, against what rep.h promises about a
 * parked request: once its handler has returned it holds no body
 * (pd_req_body() NULL, length 0: a coordinator parks up to
 * coordinator.max_node_requests node results, each up to max_msg, until
 * its journal is durable), and its later reply still reaches the requester
 * whole; the context that held it then serves the next request, replied
 * at once in the request's own message. The loop runs in this thread; the
 * requester is an nng REQ socket in a thread of its own.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "loop.h"
#include "profd/errors.h"
#include "rep.h"
#include "loop_pump.h"

#define BIG ((size_t)256 << 10) /* a request body of 256 KiB */

typedef struct fixture {
    pd_loop_t loop;
    pd_rep_t *rep;
    char url[128];
    pd_req_t *parked;   /* the request the handler parked */
    size_t seen_len;    /* the body's length as the handler saw it */
    unsigned char seen; /* its last byte */
    int handled;
} fixture_t;

typedef struct client {
    const char *url;
    char *body;
    size_t len;
    char *reply; /* what came back, NUL-terminated */
    size_t reply_len;
    int rv;
    int timeout_ms; /* for the reply; 10 s when 0 */
    _Atomic bool done;
} client_t;

/* Bodies starting with 'p' are parked; others answered at once with their
 * length and last byte. */
static void handler(pd_req_t *req, void *arg)
{
    fixture_t *f = arg;
    size_t len;
    const unsigned char *b = pd_req_body(req, &len);
    f->handled++;
    f->seen_len = len;
    f->seen = len ? b[len - 1] : 0;
    if (len && b[0] == 'p') {
        assert_true(pd_req_park(req));
        f->parked = req;
        return;
    }
    char out[64];
    int n = snprintf(out, sizeof(out), "now %zu %c", len, len ? b[len - 1] : '-');
    pd_req_reply(req, out, (size_t)n);
}

static void *client_run(void *arg)
{
    client_t *c = arg;
    nng_socket s;
    nng_msg *m = NULL;
    c->rv = nng_req0_open(&s);
    if (c->rv == 0) {
        nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, c->timeout_ms ? c->timeout_ms : 10000);
        nng_socket_set_ms(s, NNG_OPT_REQ_RESENDTIME, 60000); /* never sent twice */
        if ((c->rv = nng_dial(s, c->url, NULL, 0)) == 0 && (c->rv = nng_msg_alloc(&m, 0)) == 0 &&
            (c->rv = nng_msg_append(m, c->body, c->len)) == 0 &&
            (c->rv = nng_sendmsg(s, m, 0)) == 0) {
            m = NULL;
            if ((c->rv = nng_recvmsg(s, &m, 0)) == 0) {
                c->reply_len = nng_msg_len(m);
                c->reply = calloc(1, c->reply_len + 1);
                memcpy(c->reply, nng_msg_body(m), c->reply_len);
            }
        }
        nng_msg_free(m);
        nng_close(s);
    }
    atomic_store(&c->done, true);
    return NULL;
}

/* Turn the loop for `ms` at most, or until done(arg) says so. */
static void pump(fixture_t *f, int ms, bool (*done)(void *arg), void *arg)
{
    loop_pump(&f->loop, ms, done, arg);
}

static bool client_done(void *arg)
{
    return atomic_load(&((client_t *)arg)->done);
}

static bool parked(void *arg)
{
    return ((fixture_t *)arg)->parked != NULL;
}

static void client_start(pthread_t *t, client_t *c, const fixture_t *f, char first, char last,
                         size_t len)
{
    int timeout_ms = c->timeout_ms;
    memset(c, 0, sizeof(*c));
    c->timeout_ms = timeout_ms;
    c->url = f->url;
    c->len = len;
    c->body = malloc(len);
    memset(c->body, 'x', len);
    c->body[0] = first;
    c->body[len - 1] = last;
    assert_int_equal(pthread_create(t, NULL, client_run, c), 0);
}

static void client_end(pthread_t t, client_t *c)
{
    assert_int_equal(pthread_join(t, NULL), 0);
    free(c->body);
    free(c->reply);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    char err[256] = "";
    assert_int_equal(pd_loop_init(&f->loop), 0);
    snprintf(f->url, sizeof(f->url), "ipc:///tmp/profd-test-rep-%d.sock", (int)getpid());
    pd_rep_opts_t o = {.url = f->url,
                       .max_msg = (size_t)1 << 20,
                       .initial = 1,
                       .max_contexts = 8,
                       .handler = handler,
                       .handler_arg = f};
    int rv = pd_rep_open(&f->rep, &f->loop, &o, err, sizeof(err));
    if (rv != 0) {
        fail_msg("pd_rep_open %s: %d %s", f->url, rv, err);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    assert_true(pd_rep_close(f->rep));
    assert_int_equal(pd_loop_fini(&f->loop), 0);
    unlink(f->url + 6);
    free(f);
    return 0;
}

static void test_parked_gives_its_body_back(void **state)
{
    fixture_t *f = *state;
    pthread_t t;
    client_t c = {0};
    pd_rep_stats_t st;
    size_t len = 99;

    client_start(&t, &c, f, 'p', 'z', BIG);
    pump(f, 10000, parked, f);
    assert_non_null(f->parked);
    assert_int_equal(f->handled, 1);
    assert_int_equal(f->seen_len, BIG); /* the handler had it whole */
    assert_int_equal(f->seen, 'z');
    /* the handler returned: the parked request holds no body */
    assert_null(pd_req_body(f->parked, &len));
    assert_int_equal(len, 0);
    pd_rep_stats(f->rep, &st);
    assert_int_equal(st.parked, 1);
    assert_int_equal(st.requests, 1);
    pump(f, 50, NULL, NULL);
    assert_false(atomic_load(&c.done)); /* still waiting for its reply */

    /* the later reply, in a message of its own, reaches the requester */
    static const char late[] = "late reply: 0123456789";
    pd_req_reply(f->parked, late, sizeof(late) - 1);
    f->parked = NULL;
    pd_rep_stats(f->rep, &st);
    assert_int_equal(st.parked, 0);
    pump(f, 10000, client_done, &c);
    assert_true(atomic_load(&c.done));
    assert_int_equal(c.rv, 0);
    assert_int_equal(c.reply_len, sizeof(late) - 1);
    assert_string_equal(c.reply, late);
    client_end(t, &c);

    /* the next request, answered at once in its own message */
    client_start(&t, &c, f, 'a', 'q', BIG);
    pump(f, 10000, client_done, &c);
    assert_int_equal(c.rv, 0);
    assert_string_equal(c.reply, "now 262144 q");
    assert_int_equal(f->handled, 2);
    assert_null(f->parked);
    client_end(t, &c);

    /* an empty reply to a parked request is one too */
    client_start(&t, &c, f, 'p', 'e', 10);
    pump(f, 10000, parked, f);
    assert_non_null(f->parked);
    assert_null(pd_req_body(f->parked, &len));
    assert_int_equal(len, 0);
    pd_req_reply(f->parked, "", 0);
    f->parked = NULL;
    pump(f, 10000, client_done, &c);
    assert_int_equal(c.rv, 0);
    assert_int_equal(c.reply_len, 0);
    assert_string_equal(c.reply, "");
    client_end(t, &c);
    pd_rep_stats(f->rep, &st);
    assert_int_equal(st.requests, 3);
    assert_int_equal(st.parked, 0);
}

/* A request parked when the endpoint closes is freed without a reply (no
 * leak under LeakSanitizer, its body gone already). */
static void test_parked_at_close(void **state)
{
    fixture_t *f = *state;
    pthread_t t;
    client_t c = {.timeout_ms = 1500};
    size_t len = 99;

    client_start(&t, &c, f, 'p', 'c', 1000);
    pump(f, 10000, parked, f);
    assert_non_null(f->parked);
    assert_null(pd_req_body(f->parked, &len));
    assert_int_equal(len, 0);
    assert_true(pd_rep_close(f->rep));
    f->rep = NULL;
    pump(f, 10000, client_done, &c);
    assert_int_equal(c.rv, NNG_ETIMEDOUT); /* never answered */
    client_end(t, &c);
    char err[256] = "";
    pd_rep_opts_t o = {.url = f->url, .initial = 1, .handler = handler, .handler_arg = f};
    assert_int_equal(pd_rep_open(&f->rep, &f->loop, &o, err, sizeof(err)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parked_gives_its_body_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parked_at_close, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
