// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The step history's entry layout (issue 30): a rank's phases in one block
 * grown by one at each new name, the step ring in the entry's own
 * allocation, where it stands only in a live history's entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"
#include "windows.h"
#include "wrecord.h"
#include "window_one.h"

/* The entry's size, exact (LP64): identity 64, times and phases 48, clock
 * 24; `now` 56 more in a live history. Before the entries were slimmed:
 * 328, the same for a record's entries. */
static void test_history_entry_size(void **state)
{
    (void)state;
#if UINTPTR_MAX == UINT64_MAX
    assert_int_equal(sizeof(pd_hist_rank_t), 136);
    assert_int_equal(sizeof(pd_hist_now_t), 56);
#else
    skip();
#endif
}

/* Phases past those allocated: each new name grows the block by one and
 * the times of the earlier ones stay exact; the 9th name is dropped (and
 * counted) as before, and takes nothing from the 8 kept. */
static void test_history_phases_grow(void **state)
{
    (void)state;
    pd_history_t h;
    pd_history_init(&h, 8, 4, 4);
    pd_hist_id_t id = {"run", "actor", "node1", NULL, 0, PP_NONE, 100};
    pd_hist_rank_t *r = pd_history_get(&h, &id, 0);
    assert_non_null(r);
    assert_null(r->phases);
    assert_int_equal(r->nphases, 0);
    pd_history_put(&h, r, 10, 50000);
    pd_history_put_phase(&h, r, 10, "p0", 1000);
    pd_history_put_phase(&h, r, 9, "p0", 900);
    assert_int_equal(r->nphases, 1);
    for (int p = 1; p < PD_HIST_PHASES; p++) { /* p1..p7, each at steps 9 and 10 */
        char name[8];
        snprintf(name, sizeof(name), "p%d", p);
        pd_history_put_phase(&h, r, 10, name, 1000 + p);
        pd_history_put_phase(&h, r, 9, name, 900 + p);
        assert_int_equal(r->nphases, p + 1);
        for (int q = 0; q <= p; q++) { /* every ring so far, exact after the growth */
            assert_int_equal(pd_history_phase_us(&h, r, q, 10), 1000 + q);
            assert_int_equal(pd_history_phase_us(&h, r, q, 9), 900 + q);
            assert_int_equal(pd_history_phase_us(&h, r, q, 8), -1);
        }
    }
    pd_history_put_phase(&h, r, 10, "p8", 77);
    pd_history_put_phase(&h, r, 10, "p8", 77);
    assert_int_equal(r->nphases, PD_HIST_PHASES);
    assert_int_equal(r->phases_dropped, 2);
    assert_int_equal(pd_history_phase_us(&h, r, PD_HIST_PHASES, 10), -1);
    for (int q = 0; q < PD_HIST_PHASES; q++) {
        char name[8];
        snprintf(name, sizeof(name), "p%d", q);
        assert_string_equal(r->phases[q], name);
        assert_int_equal(pd_history_phase_us(&h, r, q, 10), 1000 + q);
    }
    /* added to (a phase run twice a step), and cleared as the ring moves on */
    pd_history_put_phase(&h, r, 10, "p3", 10);
    assert_int_equal(pd_history_phase_us(&h, r, 3, 10), 1013);
    pd_history_put(&h, r, 12, 60000); /* the phase ring (4) holds 9..12 */
    assert_int_equal(pd_history_phase_us(&h, r, 3, 9), 903);
    assert_int_equal(pd_history_phase_us(&h, r, 3, 11), -1);
    pd_history_put(&h, r, 13, 70000); /* now 10..13: slot of 9 is 13's, cleared */
    assert_int_equal(pd_history_phase_us(&h, r, 3, 9), -1);
    assert_int_equal(pd_history_phase_us(&h, r, 3, 13), -1);
    assert_int_equal(pd_history_phase_us(&h, r, 7, 10), 1007);
    assert_int_equal(pd_history_step_us(&h, r, 10), 50000);
    assert_int_equal(pd_history_step_us(&h, r, 13), 70000);
    pd_history_fini(&h);
}

/* A window's record: its entries keep no `now` (pd_history_events and
 * pd_history_where leave them as they are) and answer the same step, phase
 * and section times, exactly, as the live entries they were copied from. */
static void test_history_record_entry_answers_as_live(void **state)
{
    (void)state;
    pd_history_t live;
    pd_history_init(&live, 128, 64, 16);
    pd_windows_t ws;
    pd_windows_init(&ws, NULL, 0);
    window_one(&ws, 3, PP_WS_PENDING, 110, 111);
    for (int64_t k = 0; k < 4; k++) {
        pd_hist_id_t id = {"run", "actor", "node1", NULL, k, k, 100 + k};
        pd_hist_rank_t *r = pd_history_get(&live, &id, 0);
        assert_non_null(r->now);
        for (int64_t st = 1; st <= 128; st++) {
            pd_history_put(&live, r, st, 100000 * (k + 1) + st);
            pd_history_put_phase(&live, r, st, "generate", 40000 + st);
            pd_history_put_phase(&live, r, st, "update_actor", 50000 + 10 * k + st);
            int64_t sev[3] = {st, 2, 7 * st};
            pd_history_sections(&live, r, sev, 3);
        }
    }
    pd_wrecords_t rs;
    pd_wrecords_init(&rs);
    pd_wrecords_sync(&rs, &ws, &live, 1);
    pd_wrecord_t *rec = pd_wrecords_get(&rs, 3);
    assert_non_null(rec);
    pd_wrecord_take(rec, &live); /* 128 < 102 + 64 / 2: taken when read */
    assert_int_equal(rec->lo, 102);
    assert_int_equal(rec->hi, 119);
    assert_int_equal(rec->h.steps, 18);
    assert_true(rec->h.record);
    assert_int_equal(rec->h.n, 4);
    for (size_t i = 0; i < rec->h.n; i++) {
        pd_hist_rank_t *d = rec->h.v[i];
        pd_hist_id_t id = {"run", "actor", "node1", NULL, d->rank, d->rank, 100 + d->rank};
        const pd_hist_rank_t *s = pd_history_find(&live, &id);
        assert_non_null(s);
        assert_null(d->now);
        assert_int_equal(d->nphases, 2);
        assert_string_equal(d->phases[0], "generate");
        assert_string_equal(d->phases[1], "update_actor");
        assert_int_equal(d->last, 119);
        assert_int_equal(pd_history_first(&rec->h, d), 102);
        for (int64_t st = 102; st <= 119; st++) {
            assert_int_equal(pd_history_step_us(&rec->h, d, st), 100000 * (d->rank + 1) + st);
            assert_int_equal(pd_history_step_us(&rec->h, d, st), pd_history_step_us(&live, s, st));
            assert_int_equal(pd_history_phase_us(&rec->h, d, 0, st), 40000 + st);
            assert_int_equal(pd_history_phase_us(&rec->h, d, 1, st), 50000 + 10 * d->rank + st);
            assert_int_equal(pd_history_phase_us(&rec->h, d, 1, st),
                             pd_history_phase_us(&live, s, 1, st));
            assert_int_equal(pd_history_section_us(&rec->h, d, 2, st), 7 * st);
            assert_int_equal(pd_history_section_us(&rec->h, d, 1, st), -1);
        }
        assert_int_equal(pd_history_step_us(&rec->h, d, 101), -1);
        assert_int_equal(pd_history_step_us(&rec->h, d, 120), -1);
        /* no `now`: events and where a rank stands are not a record's */
        const int64_t ev[] = {1, 200, 0, 2, 200, 5000};
        assert_int_equal(pd_history_events(&rec->h, d, ev, 6, NULL, 0, NULL, 0, 42), 0);
        pd_history_where(d, 200, true, 10, 43);
        assert_int_equal(d->last, 119);
        assert_int_equal(d->seen_ms, 43);
        assert_null(d->now);
    }
    pd_wrecords_fini(&rs);
    pd_windows_fini(&ws);
    pd_history_fini(&live);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_entry_size),
        cmocka_unit_test(test_history_phases_grow),
        cmocka_unit_test(test_history_record_entry_answers_as_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
