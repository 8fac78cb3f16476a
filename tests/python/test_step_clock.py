# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""System test: step and phase times are exact, not a scheduler tick's
multiples. A job whose steps last 7.3 ms (a sleep) with a 402 us phase in
each (a busy wait) runs under the real daemon with a window over steps
20-22; every step and phase time in the window's steps.json lies between
the two brackets the job measured itself on CLOCK_MONOTONIC (the time from
the step call's return to the end call, and from before the begin call to
the end call's return), to the microsecond, and the times are not multiples
of 4 ms, nor of 1 ms (CLOCK_MONOTONIC_COARSE's tick: what the client used
to stamp them with).
"""

import json
import os
import time
import unittest

import profd
import profdtest

profdtest.require(daemon=True)

JOB = "clock"
STEPS = 40
FIRST, END = 20, 23  # the window: steps 20, 21, 22


def busy_until(t_ns):
    while time.monotonic_ns() < t_ns:
        pass


class TestStepClock(profdtest.DaemonCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        c = profdtest.sim_window_client(cls, JOB, FIRST, END, "clocked")
        cls.inner, cls.outer, cls.ph_inner, cls.ph_outer = {}, {}, {}, {}
        for n in range(1, STEPS + 1):
            t0 = time.monotonic_ns()
            c.step_begin(n)
            t1 = time.monotonic_ns()
            time.sleep(0.0073 - 0.0006)
            p0 = time.monotonic_ns()
            c.phase_begin("optimizer")
            p1 = time.monotonic_ns()
            busy_until(p1 + 402000)
            p2 = time.monotonic_ns()
            c.phase_end("optimizer")
            p3 = time.monotonic_ns()
            busy_until(p3 + 200000)
            t2 = time.monotonic_ns()
            c.step_end(n)
            t3 = time.monotonic_ns()
            cls.inner[n], cls.outer[n] = t2 - t1, t3 - t0
            cls.ph_inner[n], cls.ph_outer[n] = p2 - p1, p3 - p0
            time.sleep(0.002)
        cls.steps = profdtest.finish_sim_window(cls, c, JOB)

    def test_window_done(self):
        self.assertEqual(self.rc, 0)

    def rank(self):
        (r,) = [r for r in self.steps["ranks"] if r["role"] == "clocked"]
        return r

    def phase_row(self, r):
        """phase_us is phases x steps, row by row: the one phase's row."""
        return r["phase_us"][: len(r["step_us"])]

    def between_brackets(self, times, inner, outer):
        """Each time (us) of the window's steps, in order, between the
        brackets inner[n] and outer[n] (ns) of its step n: how many were
        checked."""
        lo = self.steps["steps"][0]
        checked = 0
        for i, us in enumerate(times):
            n = lo + i
            if us < 0 or n not in inner:
                continue
            # both stamps are floored to the microsecond: +-1 us
            self.assertGreaterEqual(us, inner[n] // 1000 - 1, (n, us, inner[n]))
            self.assertLessEqual(us, outer[n] // 1000 + 1, (n, us, outer[n]))
            checked += 1
        return checked

    def test_step_times_between_the_brackets(self):
        r = self.rank()
        self.assertGreaterEqual(self.between_brackets(r["step_us"], self.inner, self.outer), END - FIRST,
                                r["step_us"])

    def test_phase_times_between_the_brackets(self):
        (ro,) = [ro for ro in self.steps["roles"] if ro["role"] == "clocked"]
        self.assertEqual(ro["phases"], ["optimizer"])
        checked = self.between_brackets(self.phase_row(self.rank()), self.ph_inner, self.ph_outer)
        self.assertGreaterEqual(checked, END - FIRST)

    def test_not_quantised(self):
        # a tick's multiple, give or take the microsecond floors (a time of
        # 0 is stored as 1): what CLOCK_MONOTONIC_COARSE gave
        def on_tick(us, tick):
            return min(us % tick, tick - us % tick) <= 2

        r = self.rank()
        times = [us for us in r["step_us"] if us > 0] + [us for us in self.phase_row(r) if us > 0]
        self.assertGreaterEqual(len(times), 2 * (END - FIRST))
        self.assertLessEqual(len([us for us in times if on_tick(us, 1000)]), len(times) // 4, times)
        self.assertLessEqual(len([us for us in times if on_tick(us, 4000)]), len(times) // 4, times)


if __name__ == "__main__":
    profdtest.main()
