# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Sections by hand (Client.section / section_add over profd_section_*):
a job whose steps hold a forward section (a 3 ms busy wait) with a comm
section nested in it (1 ms busy wait), and 1,500 us of data added; a window
over steps 20-22 keeps them in steps.json (section_us: sections x steps).
Each time lies between the brackets the job measured itself on
CLOCK_MONOTONIC around the calls: comm within its own; forward is exclusive
(the outer bracket less comm's inner one, at most; its own busy waits, at
least); data exactly 1,500 us; unknown sections (never used) -1. Bad input:
unknown names are refused (False), a section ended out of order is
PROFD_ESTATE from C (ignored by the context manager's caller).
"""

import json
import os
import time
import unittest

import profd
import profdtest

profdtest.require(daemon=True)

JOB = "sections"
STEPS = 30
FIRST, END = 20, 23


def busy(ns):
    t = time.monotonic_ns() + ns
    while time.monotonic_ns() < t:
        pass


class TestSections(profdtest.DaemonCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        c = profdtest.sim_window_client(cls, JOB, FIRST, END, "sect")
        cls.b = {}
        for n in range(1, STEPS + 1):
            c.step_begin(n)
            f0 = time.monotonic_ns()
            with c.section("forward"):
                f1 = time.monotonic_ns()
                busy(1500000)
                c0 = time.monotonic_ns()
                with c.section("comm"):
                    c1 = time.monotonic_ns()
                    busy(1000000)
                    c2 = time.monotonic_ns()
                c3 = time.monotonic_ns()
                busy(1500000)
                f2 = time.monotonic_ns()
            f3 = time.monotonic_ns()
            cls.added = c.section_add("data", 1500)
            cls.bad_name = c.section_add("dataloader", 10)
            cls.bad_value = c.section_add("data", -1)
            c.step_end(n)
            cls.b[n] = (f0, f1, f2, f3, c0, c1, c2, c3)
            time.sleep(0.002)
        cls.doc = profdtest.finish_sim_window(cls, c, JOB)

    def rows(self):
        (r,) = [r for r in self.doc["ranks"] if r["role"] == "sect"]
        n = len(r["step_us"])
        self.assertEqual(len(r["section_us"]), 5 * n)
        return {name: r["section_us"][k * n:(k + 1) * n] for k, name in enumerate(self.doc["sections"])}, r

    def test_window_done(self):
        self.assertEqual(self.rc, 0)
        self.assertEqual(self.doc["sections"], ["data", "forward", "backward", "optimizer", "comm"])

    def test_api_answers(self):
        self.assertTrue(self.added)
        self.assertFalse(self.bad_name)
        self.assertFalse(self.bad_value)

    def test_times_between_the_brackets(self):
        secs, r = self.rows()
        lo = self.doc["steps"][0]
        checked = 0
        for i in range(len(r["step_us"])):
            n = lo + i
            if n not in self.b or secs["forward"][i] < 0:
                continue
            f0, f1, f2, f3, c0, c1, c2, c3 = self.b[n]
            comm, fwd = secs["comm"][i], secs["forward"][i]
            # comm: between its inner and outer brackets (rounded to the us: +-1)
            self.assertGreaterEqual(comm, (c2 - c1) // 1000 - 1, (n, comm))
            self.assertLessEqual(comm, (c3 - c0) // 1000 + 1, (n, comm))
            # forward, exclusive: at most its outer bracket less comm's inner
            # one, at least its inner bracket less comm's outer one
            self.assertLessEqual(fwd, ((f3 - f0) - (c2 - c1)) // 1000 + 1, (n, fwd))
            self.assertGreaterEqual(fwd, ((f2 - f1) - (c3 - c0)) // 1000 - 1, (n, fwd))
            self.assertGreaterEqual(fwd, 3000 - 1)
            self.assertEqual(secs["data"][i], 1500)
            self.assertEqual(secs["backward"][i], -1)
            self.assertEqual(secs["optimizer"][i], -1)
            self.assertLessEqual(fwd + comm, r["step_us"][i])  # data was added, not spent
            checked += 1
        self.assertGreaterEqual(checked, END - FIRST)


if __name__ == "__main__":
    profdtest.main()
