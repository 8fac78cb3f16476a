// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd's background thread: the step events of the ring (batched, with
 * the clock samples of their round trips) and the capture results, sent to
 * the daemon through rpc.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_exec.h"
#include "io.h"

#define HEARTBEAT_MS 2000 /* while no plan long poll is held (it is the liveness) */

/* ---- events and results ---- */

/* The daemon's clock - ours, and the error bound (0: none measured). */
static void clock_best(const cl_io_t *io, int64_t *off, int64_t *err)
{
    *off = 0;
    *err = 0;
    for (int i = 0; i < io->clk_n; i++) {
        if (*err == 0 || io->clk_err[i] < *err) {
            *off = io->clk_off[i];
            *err = io->clk_err[i];
        }
    }
}

void cl_flush_events(profd_client_t *c, int timeout_ms, bool force)
{
    cl_io_t *io = &c->io;
    cl_event_t evs[64];
    size_t n = 0, np = 0, ns = 0;
    unsigned k;
    char *names[CL_PHASE_NAMES];

    if (io->have_last_begin) { /* where we were while disconnected */
        io->evbuf[0] = io->last_begin.kind;
        io->evbuf[1] = io->last_begin.step;
        io->evbuf[2] = io->last_begin_us;
        io->have_last_begin = false;
        n = 1;
    }
    cl_clock_anchor(&c->clock); /* before the pop: the events lie before it */
    while (n + np < EV_BATCH && (k = cl_ring_pop(c->ring, evs, 64)) > 0) {
        for (unsigned i = 0; i < k; i++) {
            if (evs[i].kind >= CL_EV_SECTION && evs[i].kind < CL_EV_SECTION + PROFD_SECTIONS) {
                io->sevbuf[3 * ns] = evs[i].step;
                io->sevbuf[3 * ns + 1] = evs[i].kind - CL_EV_SECTION;
                io->sevbuf[3 * ns + 2] =
                    (cl_clock_span_ns(&c->clock, (int64_t)evs[i].tick) + 500) / 1000;
                ns++;
            } else if (evs[i].kind >= CL_EV_SECTION_NS &&
                       evs[i].kind < CL_EV_SECTION_NS + PROFD_SECTIONS) {
                io->sevbuf[3 * ns] = evs[i].step;
                io->sevbuf[3 * ns + 1] = evs[i].kind - CL_EV_SECTION_NS;
                io->sevbuf[3 * ns + 2] = ((int64_t)evs[i].tick + 500) / 1000;
                ns++;
            } else if (evs[i].kind == CL_EV_PHASE_BEGIN || evs[i].kind == CL_EV_PHASE_END) {
                io->pevbuf[3 * np] = evs[i].kind == CL_EV_PHASE_BEGIN ? 1 : 2;
                io->pevbuf[3 * np + 1] = evs[i].step;
                io->pevbuf[3 * np + 2] = cl_clock_ns(&c->clock, evs[i].tick) / 1000;
                np++;
            } else {
                io->evbuf[3 * n] = evs[i].kind;
                io->evbuf[3 * n + 1] = evs[i].step;
                io->evbuf[3 * n + 2] = cl_clock_ns(&c->clock, evs[i].tick) / 1000;
                n++;
            }
        }
        if (n + np + 64 > EV_BATCH || ns + 64 > EV_BATCH) {
            break;
        }
    }
    uint64_t dropped = cl_ring_dropped(c->ring);
    int64_t now = cl_now_ms();
    io->idle_rounds = n + np + ns ? 0 : io->idle_rounds + 1;
    if (n + np + ns) {
        io->last_event_ms = now;
    }
    if (n + np + ns == 0 && !force && (io->watching || now - io->last_sent_ms < HEARTBEAT_MS) &&
        dropped == io->dropped_reported) {
        return; /* nothing to say: a held long poll tells the daemon we are here */
    }
    pp_msg_t req, rep;
    pp_msg_init(&req, PP_T_events);
    req.u.events.client = io->client_id;
    req.u.events.gen = io->gen;
    req.u.events.ev = io->evbuf;
    req.u.events.ev_n = 3 * n;
    req.u.events.dropped = (int64_t)(dropped - io->dropped_reported);
    if (np) {
        int nn = atomic_load_explicit(&c->nphase_names, memory_order_acquire);
        for (int i = 0; i < nn; i++) {
            names[i] = c->phase_names[i];
        }
        req.u.events.pev = io->pevbuf;
        req.u.events.pev_n = 3 * np;
        req.u.events.names = names;
        req.u.events.names_n = (size_t)nn;
    }
    if (ns) {
        req.u.events.sev = io->sevbuf;
        req.u.events.sev_n = 3 * ns;
    }
    clock_best(io, &req.u.events.offset_us, &req.u.events.offset_err_us);
    int64_t t0 = cl_now_us();
    int rv = cl_rpc(c, &req, &rep, timeout_ms);
    int64_t t3 = cl_now_us();
    io->last_sent_ms = now;
    if (rv == 0) {
        atomic_fetch_add(&c->st_events_sent, (int64_t)(n + np + ns));
        io->dropped_reported = dropped;
        if (rep.type == PP_T_ack && rep.u.ack.t_us > 0 && t3 >= t0) {
            /* the daemon read its clock between our send and our receive */
            io->clk_off[io->clk_pos] = rep.u.ack.t_us - (t0 + t3) / 2;
            io->clk_err[io->clk_pos] = (t3 - t0) / 2 + 1;
            io->clk_pos = (io->clk_pos + 1) % CL_CLOCK_SAMPLES;
            io->clk_n += io->clk_n < CL_CLOCK_SAMPLES;
        }
        pp_msg_free(&rep);
    } else if (rv == PROFD_ECLIENT || cl_transport_error(rv)) {
        cl_set_disconnected(c);
    }
}

/* While no daemon listens, step events pile up as history nobody can use
 * (and that would distort step-time estimates when replayed in a burst):
 * keep only the newest step begin, to tell the next daemon where we are. */
void cl_discard_stale_events(profd_client_t *c)
{
    cl_event_t evs[64];
    unsigned k;
    cl_clock_anchor(&c->clock);
    while ((k = cl_ring_pop(c->ring, evs, 64)) > 0) {
        for (unsigned i = 0; i < k; i++) {
            if (evs[i].kind == CL_EV_STEP_BEGIN) {
                c->io.last_begin = evs[i];
                c->io.last_begin_us = cl_clock_ns(&c->clock, evs[i].tick) / 1000;
                c->io.have_last_begin = true;
            }
        }
    }
}

void cl_take_outbox(profd_client_t *c)
{
    cl_result_t *r = atomic_exchange_explicit(&c->outbox, NULL, memory_order_acquire);
    cl_result_t *rev = NULL;
    while (r) { /* the stack is newest first: reverse it */
        cl_result_t *next = r->next;
        r->next = rev;
        rev = r;
        r = next;
    }
    cl_result_t **tail = &c->io.results;
    while (*tail) {
        tail = &(*tail)->next;
    }
    *tail = rev;
}

/* A result waits while an exec command of one of its captures runs (the
 * daemon would gather a folder still being written); one that failed fails
 * its capture. `closing`: whatever still runs fails it instead. True when
 * the result can go. */
bool cl_exec_settled(cl_result_t *r, bool closing)
{
    for (size_t i = 0; i < r->res->captures_n; i++) {
        pp_capture_t *cap = &r->res->captures[i];
        char why[PP_MAX_PATH + 128];
        int rv;
        if (cap->dir == NULL || (rv = cl_exec_outcome(cap->dir, why, sizeof(why))) == 0) {
            continue;
        }
        if (rv == 1 && !closing) {
            return false;
        }
        if (rv == 1) {
            snprintf(why, sizeof(why), "exec: a command was still running when profd closed");
        }
        if (cap->status == PP_CAP_COMPLETE || cap->status == PP_CAP_TRUNCATED) {
            char *dup = strdup(why);
            if (dup) {
                free(cap->reason);
                cap->reason = dup;
                cap->status = PP_CAP_FAILED;
            }
        }
    }
    return true;
}

void cl_flush_results(profd_client_t *c, int timeout_ms)
{
    cl_io_t *io = &c->io;
    cl_take_outbox(c);
    while (io->results && io->registered) {
        cl_result_t *r = io->results;
        if (!cl_exec_settled(r, io->stop)) {
            return; /* asked again at the next flush */
        }
        pp_msg_t req, rep;
        pp_msg_init(&req, PP_T_result);
        req.u.result = *r->res; /* borrowed */
        req.u.result.client = io->client_id;
        int rv = cl_rpc(c, &req, &rep, timeout_ms);
        if (rv == PROFD_ECLIENT || cl_transport_error(rv)) {
            cl_set_disconnected(c); /* keep it; retried after registering again */
            return;
        }
        if (rv == PROFD_ELIMIT) {
            return; /* over the daemon's rate limit: kept for the next flush */
        }
        if (rv == 0) {
            pp_msg_free(&rep);
        } else {
            cl_log(c, PROFD_LOG_WARN, "profd: result for window %lld refused: %s",
                   (long long)r->res->window, profd_strerror(rv));
        }
        io->results = r->next;
        pp_record_free(&pp_desc_result, r->res);
        free(r->res);
        free(r);
    }
}

void cl_say_bye(profd_client_t *c)
{
    pp_msg_t req, rep;
    pp_msg_init(&req, PP_T_bye);
    req.u.bye.client = c->io.client_id;
    int rv = cl_rpc(c, &req, &rep, CLOSE_TIMEOUT_MS);
    if (rv == 0) {
        pp_msg_free(&rep);
        cl_log(c, PROFD_LOG_DEBUG, "profd: goodbye acknowledged");
    } else {
        cl_log(c, PROFD_LOG_DEBUG, "profd: goodbye not acknowledged: %s", profd_strerror(rv));
    }
}
