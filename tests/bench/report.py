# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The benchmarks' output: the table printed, bench-results.json and
tests/bench/RESULTS.md."""

import json
import os

import reproduce
from benchlib import HERE


def fmt_val(v, unit, fmt=None):
    if v is None:
        return "-"
    if fmt == "int" or unit in ("ev/s",):
        return "{:,.0f}".format(v)
    if unit == "%":
        return "%.1f" % v
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def spread(r):
    s = r["summary"]
    if not s:
        return "", ""
    if s["n"] == 1:
        return "", "n=1"
    if s["n"] >= 10:
        return "%s-%s" % (fmt_val(s["p10"], r["unit"], r["fmt"]),
                          fmt_val(s["p90"], r["unit"], r["fmt"])), "p10-p90, n=%d" % s["n"]
    return "%s-%s" % (fmt_val(s["min"], r["unit"], r["fmt"]),
                      fmt_val(s["max"], r["unit"], r["fmt"])), "min-max, n=%d" % s["n"]


def p99_of(r):
    """The p99 column: for rows of pooled samples only (row(p99=True))."""
    if not r.get("p99") or not r["summary"]:
        return ""
    return fmt_val(r["summary"]["p99"], r["unit"], r["fmt"])


JUDGED = ("A target passes when the worse end of the spread meets it: the p10 (the min for "
          "fewer than 10 runs) where higher is better, the p90 (the max) where lower is "
          "better, never the median alone; the column 'judged on' says what judged each row.")


def overloaded(load, nproc):
    """Whether a 1-minute load average is over 1 per core."""
    return bool(load) and load[0] > (nproc or 1)


def load_text(load, nproc, busy=None):
    """A figure's load averages at its start, with the warning where the
    1-minute one was over 1 per core, and the cores busy over the second
    before it (busy: None where not measured)."""
    if not load:
        return "?"
    t = " ".join("%.2f" % x for x in load)
    if overloaded(load, nproc):
        t += " (over 1 per core: %d cores)" % (nproc or 1)
    if busy is not None:
        t += "; %.2f cores busy" % busy
    return t


def probe_text(probe):
    """bench_probe's medians at a figure's start, as 'core 41.5 ms, memory
    190 ns, switch 4.9 us, wake-up 36.5 us'; '' where not measured."""
    if not probe:
        return ""
    names = (("cpu_ms", "core %.1f ms"), ("mem_ns", "memory %.0f ns"),
             ("switch_us", "switch %.1f us"), ("wake_us", "wake-up %.1f us"))
    return ", ".join(f % probe[k] for k, f in names if probe.get(k) is not None)


def start_text(r, nproc):
    """A group's heading: its load at start and, where measured, the probe."""
    load = r.get("load_start")
    t = ("**%s**" if overloaded(load, nproc) else "%s") % load_text(load, nproc,
                                                                     r.get("busy_start"))
    pr = probe_text(r.get("probe_start"))
    return t + ("; probe: %s" % pr if pr else "")


def judged_col(r):
    if r["status"] == "NOT RUN":
        return ""
    return r.get("judged") or ""


def print_table(rows, out, nproc=None):
    nproc = nproc or os.cpu_count() or 1
    w = max(len(r["name"]) for r in rows)
    out.write("%-*s %14s %10s %22s %-8s %-24s %-8s %s\n" % (
        w, "figure", "median", "p99", "spread", "unit", "target", "status", "judged on"))
    group = None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            load = r.get("load_start")
            pr = probe_text(r.get("probe_start"))
            out.write("\n%s%s%s\n" % (group, "   [load average at start %s%s]" % (
                load_text(load, nproc), ": WARNING, figures taken on a loaded machine"
                if overloaded(load, nproc) else "") if load else "",
                "   [probe: %s]" % pr if pr else ""))
        med = fmt_val(r["summary"]["median"], r["unit"], r["fmt"]) if r["summary"] else "-"
        sp, how = spread(r)
        out.write("%-*s %14s %10s %22s %-8s %-24s %-8s %s\n" % (
            w, r["name"], med, p99_of(r), ("%s (%s)" % (sp, how.split(",")[0])) if sp else how,
            r["unit"], r["target"] or "",
            r["status"] if r["target"] or r["status"] == "NOT RUN" else "",
            judged_col(r) if r["target"] else ""))
    out.write("\n" + JUDGED + "\n")
    hot = sorted({r["group"] for r in rows if overloaded(r.get("load_start"), nproc)})
    if hot:
        out.write("WARNING: load average over 1 per core (%d cores) at the start of: %s\n" % (
            nproc, "; ".join(hot)))
    out.write("\n")


def write_json(path, b, meta):
    rows = [{k: v for k, v in r.items() if k != "fmt"} for r in b.rows]
    with open(path, "w") as f:
        json.dump({"meta": meta, "figures": rows, "raw": b.raw}, f, indent=1)
        f.write("\n")


def md_escape(s):
    return s.replace("|", "\\|")


def load1(v):
    return "-" if v is None else "%.1f" % v


def moved(ratios):
    """The group's baselines' ratios, this run over the earlier, as x0.94."""
    if not ratios:
        return "no baseline"
    return ", ".join("x%.2f" % r for r in ratios)


def reproduction_md(rep):
    """The RESULTS.md section that compares this run with an earlier one
    (reproduce.compare), or nothing."""
    if not rep:
        return []
    figs, a = rep["figures"], rep["against"]
    bad = [c for c in figs if not c["reproduces"] or c["status_changed"] or c.get("by_drift")]
    n_drift = sum(bool(c.get("by_drift")) for c in figs)

    def val(v, unit):
        return fmt_val(v, unit, None)

    def sp(b, unit):
        return "%s-%s" % (val(b[0], unit), val(b[1], unit))

    L = ["", "## Reproduction", ""]
    L.append("Against the run of %s at commit `%s`%s: **%d of %d** figures reproduce: %d "
             "within the other run's spread (either run's median within the other run's "
             "spread; a figure of one value, or of a spread of zero width, within 10 %% of "
             "the other's; a count of events, or a rate of counted events, also within two "
             "standard deviations of two Poisson counts), and %d speeds (times, rates, cores) only within that spread "
             "widened by how far the machine itself moved between the two figures' starts "
             "(bench_probe, no profd in it: the largest ratio of a core's time, a load from "
             "memory, a switch and a cross-CPU wake-up; the factor is listed below). %d target(s) judged "
             "differently." % (
                 a.get("date"), a.get("commit"),
                 " (--quick or --only: not a full run)" if a.get("quick") or a.get("only")
                 else "", sum(c["reproduces"] for c in figs), len(figs),
                 sum(c["reproduces"] and not c.get("by_drift") for c in figs), n_drift,
                 sum(c["status_changed"] for c in figs)))
    if any("chance" in c for c in figs):
        exp, upto = reproduce.chance(figs)
        L.append("")
        L.append("Chance alone: two runs of one unchanging distribution fail the spread rule "
                 "now and then (5 values each: %.1f %% of the time; 3 each: %.1f %%; exact over "
                 "the orders of their values, reproduce.chance_fails). Over these %d figures "
                 "it gives %.1f failures on average, and %d or fewer in 95 %% of such pairs; "
                 "%d failed here." % (100 * reproduce.chance_fails(5, 5),
                                      100 * reproduce.chance_fails(3, 3), len(figs), exp, upto,
                                      sum(not c["reproduces"] for c in figs)))
    if bad:
        L.append("")
        L.append("Beside each figure listed: the 1-minute load average at its figure's start "
                 "in both runs, and how the same figure group's baselines (rows that time "
                 "something other than profd: an empty call, cp -r, a raw stream) moved "
                 "between the runs, this run's median over the earlier's (shown, not used to "
                 "judge), and the probe's factor between the figure's two starts (used to judge "
                 "a speed, as said above).")
        L.append("")
        L.append("| figure | earlier median (spread) | this run's median (spread) | status "
                 "earlier / now | load at start earlier / now | baselines moved | machine "
                 "moved (probe) |")
        L.append("|---|---|---|---|---|---|---|")
        for c in bad:
            u = c["unit"]
            L.append("| %s | %s %s (%s) | %s %s (%s) | %s / %s%s | %s / %s | %s | %s |" % (
                md_escape(c["name"]), val(c["prev_median"], u), u, sp(c["prev_spread"], u),
                val(c["median"], u), u, sp(c["spread"], u), c["prev_status"], c["status"],
                " (with the machine's drift)" if c.get("by_drift") else
                "" if c["reproduces"] else " (not reproduced)", load1(c.get("prev_load")),
                load1(c.get("load")), moved(c.get("moves")),
                "x%.2f" % c["drift"] if c.get("drift") else "not measured"))
    return L


def write_md(path, b, meta):
    m = meta["machine"]
    nproc = m.get("nproc") or 1
    L = []
    L.append("# profd benchmarks: results")
    L.append("")
    L.append("Generated by `deploy/bench.sh` (`tests/bench/run.py`) on %s, commit `%s`, in "
             "%.0f s of wall time%s%s. Do not edit by hand: run `deploy/bench.sh` again." % (
                 meta["date"], meta["commit"], meta["wall_s"],
                 " (%.0f s with the package check and the build)" % meta["total_s"]
                 if meta.get("total_s") else "",
                 " (**--quick: smoke-test sizes, not comparable**)" if meta["quick"] else ""))
    L.append("")
    L.append("## Machine")
    L.append("")
    L.append("| | |")
    L.append("|---|---|")
    for k, label in (("nproc", "cores (nproc)"), ("cpu", "CPU"), ("memory", "memory"),
                     ("kernel", "kernel"), ("os", "system"), ("clocksource", "clock source"),
                     ("compiler", "compiler"), ("nng", "nng"), ("python", "python")):
        L.append("| %s | %s |" % (label, md_escape(str(m.get(k, "?")))))
    L.append("| load average at the run's start / end | %s / %s |" % (
        " ".join(m["loadavg_start"]), " ".join(meta["loadavg_end"])))
    tree = b.raw.get("gather_tree")
    if tree:
        L.append("| gather data | disk: %s; other file system: tmpfs (%s) |" % (
            tree["disk"], tree["tmpfs"]))
    L.append("")
    L.append("Absolute figures depend on the machine and on whatever else runs on it (the "
             "load averages above include the benchmarks' own processes); every comparison "
             "is a ratio against a baseline measured in the same run, with repetitions "
             "interleaved where it matters. Spread: min-max over the repetitions when there "
             "are fewer than 10, else p10-p90. The p99 column is filled only for rows of "
             "pooled samples (plan delivery: every start x client). Targets are reported, "
             "not enforced: MISS rows say what is known of the cause. " + JUDGED + " The "
             "load average (1, 5, 15 min) is read at the start of every figure; where the "
             "1-minute one was over 1 per core, the figure's rows say so. Each figure starts "
             "once the machine is quiet (under 0.5 cores busy over a second, waited for up to "
             "30 s: what the figure before left running is over); 'cores busy' is that "
             "second's.")
    L.append("")
    L.append("## Against the targets")
    L.append("")
    L.append("| target | figure | median | p99 | spread | status | judged on | load at start "
             "| reason known so far |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for r in b.rows:
        if not r["target"] and r["status"] != "NOT RUN":
            continue
        med = fmt_val(r["summary"]["median"], r["unit"], r["fmt"]) if r["summary"] else "-"
        sp, how = spread(r)
        p99 = p99_of(r)
        load = r.get("load_start")
        L.append("| %s | %s | %s %s | %s | %s | **%s** | %s | %s | %s |" % (
            md_escape(r["target"] or ""), md_escape(r["name"]), med, r["unit"],
            ("%s %s" % (p99, r["unit"])) if p99 else "",
            md_escape(("%s (%s)" % (sp, how)) if sp else how), r["status"],
            md_escape(judged_col(r)),
            ("**%s**" if overloaded(load, nproc) else "%s") %
            load_text(load, nproc, r.get("busy_start")),
            md_escape(r["reason"] or r["note"] if r["status"] in ("MISS", "NOT RUN") else "")))
    L.extend(reproduction_md(meta.get("reproduction")))
    L.append("")
    L.append("## Every figure")
    L.append("")
    L.append("| figure | median | p99 | spread | note |")
    L.append("|---|---|---|---|---|")
    group = None
    for r in b.rows:
        if r["group"] != group:
            group = r["group"]
            load = r.get("load_start")
            L.append("| **%s** | | | | load average at start: %s |" % (
                md_escape(group), start_text(r, nproc)))
        med = fmt_val(r["summary"]["median"], r["unit"], r["fmt"]) if r["summary"] else "-"
        sp, how = spread(r)
        p99 = p99_of(r)
        L.append("| %s | %s %s | %s | %s | %s |" % (md_escape(r["name"]), med, r["unit"],
                                                    ("%s %s" % (p99, r["unit"])) if p99 else "",
                                                    md_escape(("%s (%s)" % (sp, how)) if sp
                                                              else how),
                                                    md_escape(r["note"])))
    L.append("")
    with open(os.path.join(HERE, "method.md")) as f:
        L.append(f.read().rstrip())
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))

