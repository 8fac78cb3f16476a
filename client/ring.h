// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Single-producer single-consumer ring of step events. The training thread
 * produces (wait-free: two atomic loads, a copy, one release store); the
 * background thread consumes. A full ring drops the event and counts it;
 * it never blocks and never allocates.
 */
#ifndef PROFD_RING_H
#define PROFD_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CL_RING_SIZE 4096u /* power of two */

enum cl_ev_kind {
    CL_EV_STEP_BEGIN = 1,
    CL_EV_STEP_END = 2,
    CL_EV_PHASE_BEGIN = 3, /* `step` holds the phase's index in the client's name table */
    CL_EV_PHASE_END = 4,
    /* a step's section total: kind CL_EV_SECTION + section, `step` the
     * step, `tick` the total in the event clock's ticks, or in
     * nanoseconds with CL_EV_SECTION_NS added to the kind (added time) */
    CL_EV_SECTION = 16,
    CL_EV_SECTION_NS = 32,
};

typedef struct cl_event {
    int64_t kind;
    int64_t step;
    uint64_t tick; /* the event clock's (clock.h) */
} cl_event_t;

typedef struct cl_ring {
    _Alignas(64) _Atomic uint64_t head; /* written by the producer */
    uint64_t cached_tail;               /* producer's view of tail */
    _Alignas(64) _Atomic uint64_t tail; /* written by the consumer */
    _Alignas(64) _Atomic uint64_t dropped;
    /* set by the consumer while it sleeps until the ring is not empty
     * (rarely written: the producer reads it after each push) */
    _Alignas(64) _Atomic int sleeping;
    cl_event_t ev[CL_RING_SIZE];
} cl_ring_t;

static inline void cl_ring_init(cl_ring_t *r)
{
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->dropped, 0);
    atomic_init(&r->sleeping, 0);
    r->cached_tail = 0;
}

/* Producer side. Returns false (and counts a drop) when full. */
static inline bool cl_ring_push(cl_ring_t *r, int64_t kind, int64_t step, uint64_t tick)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - r->cached_tail >= CL_RING_SIZE) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - r->cached_tail >= CL_RING_SIZE) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return false;
        }
    }
    cl_event_t *e = &r->ev[h & (CL_RING_SIZE - 1)];
    e->kind = kind;
    e->step = step;
    e->tick = tick;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return true;
}

/* Consumer side: copy up to max events out; returns the count. */
static inline unsigned cl_ring_pop(cl_ring_t *r, cl_event_t *out, unsigned max)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    unsigned n = 0;
    while (t != h && n < max) {
        out[n++] = r->ev[t & (CL_RING_SIZE - 1)];
        t++;
    }
    atomic_store_explicit(&r->tail, t, memory_order_release);
    return n;
}

/* Whether the consumer sleeps until the next event (see cl_io_kick). */
static inline bool cl_ring_sleeping(cl_ring_t *r)
{
    return atomic_load_explicit(&r->sleeping, memory_order_relaxed) != 0;
}

static inline bool cl_ring_empty(cl_ring_t *r)
{
    return atomic_load_explicit(&r->tail, memory_order_relaxed) ==
           atomic_load_explicit(&r->head, memory_order_acquire);
}

/* Events dropped so far (consumer resets by subtracting what it reported). */
static inline uint64_t cl_ring_dropped(cl_ring_t *r)
{
    return atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

#endif
