# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Does a bench run reproduce an earlier one? Each figure both runs
measured is compared by its spread (benchlib.summary: min-max under 10
values, else p10-p90): it reproduces when either run's median lies within
the other run's spread. A figure of one value, or whose values were all
the same (a spread of zero width: a size, a count), has no spread: it
reproduces within 10 % of the other run's value. A count of events (a
row marked `count`: its values are event counts, or rates of counted
events with `count` the events one value stands for, such as wake-ups per
rank and second over intervals of so many seconds and ranks; compared by
their totals) also reproduces when the two totals differ by at most two
standard deviations of the difference of two Poisson counts (|a - b| <= 2
sqrt(a + b)): one false positive in one run and two in the next are the
same figure. That widens the spread rule for rare events and never narrows
it (until 2026-11-28 a count row was judged by its totals alone: wake-up
rates of 10.40 and 10.55 a second, each median within the other run's
spread, did not reproduce). One that neither run could measure (NaN) reproduces, one that
only one run measured does not. A target judged PASS in one run and MISS
in the other is listed too, whatever the medians.

The machine itself moves between two runs (a shared host: one VM's
cross-CPU wake-up took 27 to 58 us within minutes, and every hand-off
between threads pays it). bench_probe measures it before every figure
group (a core's speed, a load from memory, a switch, a cross-CPU
wake-up), with no profd in it. A figure that is a speed (a time, a rate,
cores busy) and is outside the other run's spread reproduces "with the
machine's drift" when it is within that spread widened by how far the
probes at the two figure starts moved (the largest of their ratios): the
machine, measured, not a tolerance chosen. Ratios against a same-run
baseline, percentages, sizes and counts are never widened. Such figures
are counted apart and listed with their factor.

The rule fails by chance alone too: two runs of one unchanging
distribution, 5 values each, hold neither median within the other's
min-max spread 4.8 % of the time (chance_fails: exact over the equally
likely orders of the 10 values). Over a hundred such figures a few fail in
every pair of perfect runs; RESULTS.md says how many chance alone gives
(chance: the expected number, and the count that 95 % of such pairs stay
within), next to how many failed."""

import functools
import itertools
import json
import math
import random

from benchlib import summary

ONE_VALUE_TOLERANCE = 0.10
# units of figures that are a speed of the machine: widened by its drift
SPEED_UNITS = frozenset(("ns", "us", "ms", "s", "ev/s", "GiB/s", "MiB/s", "cores"))


def bounds(s):
    """The spread of a summary as (lo, hi); None for no summary."""
    if not s:
        return None
    if s["n"] == 1 or s["min"] == s["max"]:
        v = s["median"]
        d = abs(v) * ONE_VALUE_TOLERANCE
        return v - d, v + d
    if s["n"] >= 10:
        return s["p10"], s["p90"]
    return s["min"], s["max"]


EXACT_ORDERS = 50000  # chance_fails enumerates up to this many orders, else samples
SAMPLES = 20000
SAMPLE_VALUES = 2000000  # and at most this many values drawn in all


@functools.lru_cache(maxsize=None)
def chance_fails(na, nb):
    """The probability that two samples of `na` and `nb` values of one
    continuous distribution fail the spread rule (neither median within
    the other's spread, as bounds() and within() take them): exact over the
    C(na + nb, na) equally likely orders of their values where there are at
    most EXACT_ORDERS of them, else over SAMPLES seeded draws (fewer for
    large samples: SAMPLE_VALUES values in all). 0 for a
    sample of one value (the 10 % rule: no chance in it)."""
    if na < 2 or nb < 2:
        return 0.0

    def fails(a, b):
        sa, sb = summary(a), summary(b)
        return not (within(sb["median"], bounds(sa)) or within(sa["median"], bounds(sb)))

    n = na + nb
    if math.comb(n, na) <= EXACT_ORDERS:
        bad = 0
        for pos in itertools.combinations(range(n), na):
            a = set(pos)
            bad += fails([float(i + 1) for i in pos],
                         [float(i + 1) for i in range(n) if i not in a])
        return bad / math.comb(n, na)
    rnd = random.Random(na * 100003 + nb)
    draws = max(200, min(SAMPLES, SAMPLE_VALUES // n))  # 1,920-value rows: about 0
    bad = sum(fails([rnd.random() for _ in range(na)], [rnd.random() for _ in range(nb)])
              for _ in range(draws))
    return bad / draws


def chance(cmp):
    """What chance alone gives over the figures of a comparison (compare's
    entries, each with its `chance`): (the expected number that fail, the
    number that 95 % of pairs of unchanging runs stay within), from the
    distribution of a sum of independent failures (Poisson binomial)."""
    dist = [1.0]
    for c in cmp:
        p = c.get("chance") or 0.0
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1 - p)
            nxt[k + 1] += q * p
        dist = nxt
    expected = sum(c.get("chance") or 0.0 for c in cmp)
    acc = 0.0
    for k, q in enumerate(dist):
        acc += q
        if acc >= 0.95:
            return expected, k
    return expected, len(dist) - 1


def within(v, b):
    return b[0] <= v <= b[1]


def count_total(r):
    """The events a `count` row's values stand for: their sum, times the
    row's `count` where it is a number (rates of counted events)."""
    k = r["count"]
    return sum(r["values"]) * (1 if isinstance(k, bool) else k)


def counts_agree(a, b):
    """Two totals of rare events: within two standard deviations of the
    difference of two Poisson counts."""
    return abs(a - b) <= 2.0 * math.sqrt(a + b)


def drift(p, r):
    """How far the machine moved between two figure starts: the largest
    ratio (>= 1, either way) of the probes both measured (bench_probe's
    medians), or None when either start has no probe."""
    a, b = p.get("probe_start"), r.get("probe_start")
    if not a or not b:
        return None
    f = [max(b[k] / a[k], a[k] / b[k]) for k in sorted(set(a) & set(b))
         if a[k] and b[k] and a[k] > 0 and b[k] > 0]
    return max(f) if f else None


def widened(b, f):
    """A spread (lo, hi) widened by a factor f >= 1 on both sides."""
    lo, hi = b
    return (lo / f if lo > 0 else lo * f), (hi * f if hi > 0 else hi / f)


def baseline_moves(prev_rows, rows):
    """Per figure group, how the machine itself moved between the runs: the
    ratio (this run / earlier) of each `baseline:` row's median, rows that
    time something other than profd in the same group (an empty call, a
    clock read's neighbour, cp -r, a raw stream). Shown beside a figure
    that did not reproduce; it judges nothing."""
    old = {r["key"]: r for r in prev_rows}
    out = {}
    for r in rows:
        p = old.get(r["key"])
        if not r["name"].startswith("baseline:") or p is None:
            continue
        a, b = p.get("summary"), r.get("summary")
        if not a or not b or not a["median"] or math.isnan(a["median"]) or \
                math.isnan(b["median"]):
            continue
        out.setdefault(r["key"].split(".")[0], []).append(b["median"] / a["median"])
    return out


def compare(prev_rows, rows):
    """One entry per figure both runs have a value for, in this run's
    order: key, name, unit, both medians, both spreads, both statuses and
    whether it reproduces."""
    old = {r["key"]: r for r in prev_rows}
    moves = baseline_moves(prev_rows, rows)
    out = []
    for r in rows:
        p = old.get(r["key"])
        if p is None or not p.get("summary") or not r.get("summary"):
            continue
        a, b = p["summary"], r["summary"]
        ba, bb = bounds(a), bounds(b)
        if math.isnan(a["median"]) or math.isnan(b["median"]):  # not measured: both, or not
            same = math.isnan(a["median"]) and math.isnan(b["median"])
        else:
            same = within(b["median"], ba) or within(a["median"], bb)
            if not same and r.get("count") and p.get("count") and "values" in r and \
                    "values" in p:  # counts: the spread, or else the Poisson test
                same = counts_agree(count_total(p), count_total(r))
        f = drift(p, r)
        by_drift = (not same and f is not None and r["unit"] in SPEED_UNITS
                    and not math.isnan(a["median"]) and not math.isnan(b["median"])
                    and (within(b["median"], widened(ba, f))
                         or within(a["median"], widened(bb, f))))
        out.append({"key": r["key"], "name": r["name"], "unit": r["unit"],
                    "prev_median": a["median"], "median": b["median"],
                    "prev_spread": ba, "spread": bb,
                    "prev_status": p["status"], "status": r["status"],
                    "reproduces": same or by_drift, "by_drift": by_drift, "drift": f,
                    "chance": 0.0 if ba[0] == ba[1] or bb[0] == bb[1] else
                    chance_fails(a["n"], b["n"]),
                    "prev_load": (p.get("load_start") or [None])[0],
                    "load": (r.get("load_start") or [None])[0],
                    "moves": moves.get(r["key"].split(".")[0]),
                    "status_changed": p["status"] != r["status"]
                    and {p["status"], r["status"]} <= {"PASS", "MISS"}})
    return out


def load(path):
    """The rows and meta of a bench-results.json."""
    with open(path) as f:
        doc = json.load(f)
    return doc["figures"], doc["meta"]
