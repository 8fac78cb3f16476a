#!/usr/bin/env python3
"""profd benchmarks: measure profd against the targets of DESIGN.md section 6
and against what users would do instead, on this machine, now.

Starts its own daemons (sockets and data in fresh temporary folders), runs
every figure several times, prints a table (median and spread), and writes
<build>/bench-results.json and tests/bench/RESULTS.md. Figures are reported,
never judged by the exit status: it is 0 when every benchmark ran, 1 when one
could not run (its row says why), 2 on wrong usage.

usage: run.py --build BUILD_DIR [--quick] [--only NAME,...] [--no-results-md]
  figures: hotpath python plan align ingest footprint idle gather overhead
  --quick   fewer repetitions and a smaller gather tree (a smoke test; the
            figures are then not comparable with a full run)
Only a full run (no --quick, no --only) rewrites RESULTS.md.
Environment: PROFD_BENCH_LARGE_MIB (size of each of the 2 large files of
the gather tree, default 1024), PROFD_BENCH_TMP (folder for data and spools,
default /var/tmp), PROFD_BENCH_SYSCALLS=strace (count the hot path's system
calls with strace even where perf_event_open works), PROFD_BENCH_SCALE_NODES,
PROFD_BENCH_SCALE_RATE and PROFD_BENCH_SCALE_FLUSH_MS (scale: node daemons,
64 ranks each, default 256; steps per second, default 0.05; the clients'
event flush period, default 5000 ms).
"""

import argparse
import resource
import datetime
import glob
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
FIGURES = ["hotpath", "python", "plan", "align", "ingest", "footprint", "idle", "gather",
           "overhead", "turnaround", "scale", "gatherload"]
# Every figure by default; scale at 4,096 ranks (64 node daemons) there,
# at 16,384 (256) only when asked for (--only scale): on 2 cores that size
# has not completed a window yet (2026-11-26: the coordinator's state saves
# re-encode every member, its loop stalled for up to 14 s, node links timed
# out and reconnected, the load average reached ~3,000)
DEFAULT = FIGURES


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- statistics


def pct(sorted_vals, p):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def summary(vals):
    v = sorted(vals)
    if not v:
        return None
    return {
        "n": len(v),
        "median": statistics.median(v),
        "min": v[0],
        "p10": pct(v, 10),
        "p90": pct(v, 90),
        "p99": pct(v, 99),
        "max": v[-1],
    }


# ---------------------------------------------------------------- processes


class Procs:
    """Every process this run starts, so that all of them are stopped."""

    def __init__(self):
        self.procs = []

    def start(self, args, log_path=None, env=None, stdout=None, **kw):
        err = open(log_path, "ab") if log_path else subprocess.DEVNULL
        p = subprocess.Popen(args, stdout=stdout if stdout is not None else err, stderr=err,
                             env=env, **kw)
        self.procs.append(p)
        return p

    def stop(self, p, timeout=10):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self):
        for p in list(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in list(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = {
            "profd": os.path.join(self.build, "daemon", "profd"),
            "profctl": os.path.join(self.build, "client", "profctl"),
            "sim": os.path.join(self.build, "client", "profd-sim"),
        }
        for b in ("hotpath", "plan", "ingest", "gather"):
            self.bin[b] = os.path.join(self.build, "tests", "bench", "bench_" + b)
        missing = [p for p in self.bin.values() if not os.access(p, os.X_OK)]
        if missing:
            raise SystemExit("bench: not built: %s (build the 'bench' target)" % ", ".join(missing))
        self.quick = args.quick
        self.procs = Procs()
        # sockets: short paths (a socket path holds 107 bytes)
        self.run_root = tempfile.mkdtemp(prefix="pdb-", dir="/tmp")
        data_base = os.environ.get("PROFD_BENCH_TMP", "/var/tmp")
        self.data_root = tempfile.mkdtemp(prefix="profd-bench-", dir=data_base)
        self.tmpfs = None
        self.tmpfs_mounted = False
        self.rows = []
        self.raw = {}
        self.failures = []
        self.ports = set()

    # ---- helpers ----

    def port(self):
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                p = s.getsockname()[1]
            if p not in self.ports:
                self.ports.add(p)
                return p

    def daemon(self, name, *extra, save_path=None, log_level="warn"):
        run = os.path.join(self.run_root, name)
        save = save_path or os.path.join(self.data_root, name, "out")
        os.makedirs(run, exist_ok=True)
        args = [self.bin["profd"], "--run-dir", run, "--save-path", save, "--node", name,
                "--log-level", log_level] + list(extra)
        p = self.procs.start(args, log_path=os.path.join(self.run_root, name + ".log"))
        ctl = "ipc://%s/control.sock" % run
        d = {"proc": p, "pid": p.pid, "run": run, "save": save, "control": ctl,
             "worker": "ipc://%s/worker.sock" % run, "name": name}
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if p.poll() is not None:
                raise RuntimeError("profd %s exited: %s" % (name, self.tail(name + ".log")))
            if self.ctl(d, "status", check=False).returncode == 0:
                return d
            time.sleep(0.05)
        raise RuntimeError("profd %s did not come up" % name)

    def tail(self, logname, n=5):
        try:
            with open(os.path.join(self.run_root, logname)) as f:
                return " | ".join(f.read().strip().splitlines()[-n:])
        except OSError:
            return ""

    def ctl(self, d, *args, check=True, timeout=60):
        r = subprocess.run([self.bin["profctl"], "--url", d["control"]] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError("profctl %s: %s%s" % (" ".join(args), r.stdout, r.stderr))
        return r

    def status(self, d, job=None):
        args = ["--json", "status"] + (["--job", job] if job else [])
        return json.loads(self.ctl(d, *args).stdout)

    def wait_ranks(self, d, n, timeout=60, job=None):
        deadline = time.monotonic() + timeout
        have = 0
        while time.monotonic() < deadline:
            have = sum(1 for r in self.status(d, job)["ranks"] if r["state"] != "lost")
            if have >= n:
                return
            time.sleep(max(0.2, n / 4096.0))  # the status of 16,384 ranks is not free
        raise RuntimeError("%d of %d ranks registered with %s" % (have, n, d["name"]))

    def stop_daemon(self, d):
        self.procs.stop(d["proc"])

    def sim(self, d, *args, threads=False, url=None, stdout=None):
        a = [self.bin["sim"], "--url", url or d["worker"]] + (["--threads"] if threads else [])
        return self.procs.start(a + list(args), log_path=os.path.join(self.run_root, "sim.log"),
                                stdout=stdout)

    def run_json(self, args, timeout, env=None):
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
        if r.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (os.path.basename(args[0]), r.returncode,
                                                     (r.stderr or r.stdout).strip()[-400:]))
        return json.loads(r.stdout)

    def row(self, key, group, name, unit, values, target=None, status="INFO", note="",
            reason="", stat=None, fmt=None, p99=False):
        """p99: the values are samples whose p99 the tables show (next to the
        median); other rows are a few repetitions, where it would be the max."""
        s = stat or summary(values)
        self.rows.append({"key": key, "group": group, "name": name, "unit": unit,
                          "values": values, "summary": s, "target": target, "status": status,
                          "note": note, "reason": reason if status == "MISS" else "",
                          "fmt": fmt, "p99": p99})

    def not_run(self, fig, err):
        self.failures.append((fig, str(err)))
        self.rows.append({"key": fig + ".error", "group": fig, "name": "%s: could not run" % fig,
                          "unit": "", "values": [], "summary": None, "target": None,
                          "status": "NOT RUN", "note": str(err)[:300], "reason": "", "fmt": None,
                          "p99": False})

    def cleanup(self):
        self.procs.stop_all()
        if self.tmpfs_mounted:
            subprocess.run(["umount", self.tmpfs], capture_output=True)
        if self.tmpfs:
            shutil.rmtree(self.tmpfs, ignore_errors=True)
        shutil.rmtree(self.run_root, ignore_errors=True)
        shutil.rmtree(self.data_root, ignore_errors=True)

    def reps(self, full, quick):
        return quick if self.quick else full

    # ---------------------------------------------------------- 1. hot path

    def fig_hotpath(self):
        d = self.daemon("hot")
        reps = self.reps(7, 3)
        r = self.run_json([self.bin["hotpath"], "--url", d["worker"], "--control", d["control"],
                           "--reps", str(reps)], timeout=300)
        self.raw["hotpath"] = r
        if r["syscalls_idle"] < 0 or os.environ.get("PROFD_BENCH_SYSCALLS") == "strace":
            r.update(self.strace_syscalls(d))
        self.stop_daemon(d)
        idle, cap = r["idle_pair_ns"], r["capture_pair_ns"]
        empty, nng = r["empty_pair_ns"], r["nng_send_ns"]
        g = "1. client hot path (C)"
        med = statistics.median(idle)
        self.row("hotpath.c_idle", g, "profd_step_begin+end, no capture due", "ns", idle,
                 target="<= 25 ns", status="PASS" if med <= 25 else "MISS",
                 note="%.1fx an empty call pair; 1/%.0f of one nng_send" % (
                     med / statistics.median(empty), statistics.median(nng) / med),
                 reason="see the note on the hot path in RESULTS.md")
        self.row("hotpath.c_capture", g, "profd_step_begin+end, capture running", "ns", cap,
                 note="e2e capture open over the steps; no-op backend")
        self.row("hotpath.c_nodaemon", g, "profd_step_begin+end, no daemon (fail-open)", "ns",
                 r["nodaemon_pair_ns"])
        self.row("hotpath.empty", g, "baseline: empty function pair, same call", "ns", empty)
        self.row("hotpath.nng_send", g, "baseline: one nng_send, 24 B, ipc:// push", "ns", nng,
                 note="one event per step sent by the training thread itself")
        self.row("hotpath.ratio_empty", g, "ratio: profd pair / empty pair", "x",
                 [a / b for a, b in zip(idle, empty)])
        self.row("hotpath.ratio_nng", g, "ratio: one nng_send / profd pair", "x",
                 [b / a for a, b in zip(idle, nng)])
        n_idle, n_cap = r["syscalls_idle"], r["syscalls_capture"]
        per = r.get("syscalls_batch_pairs", 1024)
        self.row("hotpath.syscalls", g, "system calls on the training thread, no capture due",
                 "calls", r.get("syscalls_idle_batches", [n_idle]), target="none",
                 status="PASS" if n_idle == 0 else "MISS",
                 note="per batch of %d pairs; %d in all %d pairs; %s" % (
                     per, n_idle, r["syscalls_idle_pairs"], r["syscalls_method"]),
                 reason="%d system calls in %d pairs: the library's background thread "
                        "sleeps until the next step event once none came for 2 s (the idle "
                        "target), and the first step after such a pause wakes it, one "
                        "FUTEX_WAKE per pause, not per pair (strace of the loop, 2026-11-26: "
                        "the one call after the start marker was that wake-up)" % (
                            n_idle, r["syscalls_idle_pairs"]),
                 fmt="int")
        if n_cap is not None and n_cap >= 0:
            self.row("hotpath.syscalls_capture", g, "system calls on the training thread, "
                     "capture running", "calls", r.get("syscalls_capture_batches", [n_cap]),
                     note="per batch of %d pairs; %d in all %d pairs" % (
                         per, n_cap, r["syscalls_capture_pairs"]), fmt="int")

    def strace_syscalls(self, d):
        """Fallback when perf_event_open is not allowed: strace -f the syscall
        loop and count the training thread's calls between its markers."""
        if shutil.which("strace") is None:
            return {"syscalls_method": "unavailable (no perf_event_open, no strace)"}
        out = os.path.join(self.run_root, "strace.txt")
        r = subprocess.run(["strace", "-f", "-o", out, self.bin["hotpath"], "--url", d["worker"],
                            "--control", d["control"], "--syscall-loop", "100000"],
                           capture_output=True, text=True, timeout=120)
        m = re.search(r"tid (\d+)", r.stdout)
        if r.returncode != 0 or not m:
            return {"syscalls_method": "strace failed: " + r.stderr[-200:]}
        tid = m.group(1)
        inside, n = False, 0
        with open(out) as f:
            for line in f:
                # "TID name(" starts a call; "TID <... name resumed>" ends one
                c = re.match(r"(\d+) +(<\.\.\. )?(\w+)", line)
                if not c or c.group(1) != tid or c.group(2):
                    continue
                if c.group(3) == "getppid":
                    if inside:
                        break
                    inside = True
                    continue
                n += inside
        return {"syscalls_idle": n, "syscalls_idle_pairs": 100000, "syscalls_batch_pairs": 100000,
                "syscalls_idle_batches": [n], "syscalls_capture": None,
                "syscalls_method": "strace -f, training thread only, between markers"}

    # ---------------------------------------------------------- 1b. Python

    def fig_python(self):
        """The package's two paths, one process each against the same daemon:
        profd._speedups (the C step scope, where built) and ctypes
        (PROFD_NO_SPEEDUPS=1), each with its own baselines."""
        d = self.daemon("py")
        env = dict(os.environ, PYTHONPATH=os.path.join(self.build, "python"),
                   PYTHONDONTWRITEBYTECODE="1")
        env.pop("PROFD_LIB", None)
        env.pop("PROFD_NO_SPEEDUPS", None)
        runs = {}
        for path, job, extra in (("fast", "bench", {}), ("ctypes", "benchc", {"PROFD_NO_SPEEDUPS": "1"})):
            runs[path] = self.run_json([PY, os.path.join(HERE, "bench_python.py"), "--url", d["worker"],
                                        "--profctl", self.bin["profctl"], "--control", d["control"],
                                        "--reps", str(self.reps(7, 3)), "--job", job],
                                       timeout=300, env=dict(env, **extra))
        self.raw["python"] = runs
        self.stop_daemon(d)
        r, c = runs["fast"], runs["ctypes"]
        g = "1. client hot path (Python %s)" % r["python"]
        ctypes_pair = statistics.median(r["empty_ctypes_pair_ns"])
        if r["speedups"]:
            how = "C step scope, profd._speedups"
            why = ("the with statement and the c.step(n) call around the two C calls: about "
                   "1.3x an empty Python function pair in instructions (callgrind)")
        else:
            how = "profd._speedups not in use: ctypes"
            why = "profd._speedups not in use: %s" % r["speedups_error"]
        w = r["with_idle_ns"]
        med = statistics.median(w)
        self.row("python.with_idle", g, "with c.step(n): pass, no capture due (%s)" % how, "ns", w,
                 target="<= 150 ns", status="PASS" if med <= 150 else "MISS",
                 note="%.2fx an empty ctypes call pair, %.1fx an empty Python function pair" % (
                     med / ctypes_pair, med / statistics.median(r["empty_py_pair_ns"])),
                 reason="%s; the C pair itself ~%s ns" % (why, self.med("hotpath.c_idle", "%.0f")))
        self.row("python.method_idle", g, "c.step_begin(n); c.step_end(n), no capture due (%s)" % how,
                 "ns", r["method_idle_ns"])
        self.row("python.with_capture", g, "with c.step(n): pass, capture running (%s)" % how, "ns",
                 r["with_capture_ns"], note="e2e capture, no-op Python backend")
        w = c["with_idle_ns"]
        med = statistics.median(w)
        cpair = statistics.median(c["empty_ctypes_pair_ns"])
        self.row("python.with_idle_ctypes", g,
                 "with c.step(n): pass, no capture due (ctypes, PROFD_NO_SPEEDUPS=1)", "ns", w,
                 target="<= 1 us", status="PASS" if med <= 1000 else "MISS",
                 note="%.1fx an empty ctypes call pair (%.0f ns in its process)" % (med / cpair, cpair),
                 reason="ctypes calls dominate: an empty ctypes call pair costs %.0f ns in the "
                        "same process, the C pair itself ~%s ns" % (
                            cpair, self.med("hotpath.c_idle", "%.0f")))
        self.row("python.method_idle_ctypes", g,
                 "c.step_begin(n); c.step_end(n), no capture due (ctypes, PROFD_NO_SPEEDUPS=1)", "ns",
                 c["method_idle_ns"])
        self.row("python.with_capture_ctypes", g,
                 "with c.step(n): pass, capture running (ctypes, PROFD_NO_SPEEDUPS=1)", "ns",
                 c["with_capture_ns"], note="e2e capture, no-op Python backend")
        self.row("python.empty_py", g, "baseline: empty Python function pair", "ns",
                 r["empty_py_pair_ns"])
        self.row("python.empty_ctypes", g, "baseline: empty ctypes call pair", "ns",
                 r["empty_ctypes_pair_ns"])

    def med(self, key, fmt):
        for r in self.rows:
            if r["key"] == key and r["summary"]:
                return fmt % r["summary"]["median"]
        return "?"

    # ---------------------------------------------------------- 2. plan delivery

    def fig_plan(self):
        g = "2. plan delivery (one node, idle clients)"
        for n, reps in ((64, self.reps(30, 10)), (8, self.reps(20, 5))):
            d = self.daemon("plan%d" % n)
            r = self.run_json([self.bin["plan"], "--url", d["worker"], "--control", d["control"],
                               "--clients", str(n), "--reps", str(reps)], timeout=300)
            self.stop_daemon(d)
            self.raw["plan%d" % n] = r
            lat = r["latency_us"]
            # every (repetition, client) sample: the row's median and p99
            pooled = sorted(x / 1000.0 for rep in lat for x in rep)
            st = summary(pooled)
            every = [max(rep) / 1000.0 for rep in lat]
            # the p99 of blocks of repetitions gives the spread of the p99
            k = max(1, len(lat) // 5)
            blocks = [sorted(x / 1000.0 for rep in lat[i:i + k] for x in rep)
                      for i in range(0, len(lat) - k + 1, k)]
            bp99 = [pct(b, 99) for b in blocks]
            note = "%d samples (%d starts x %d clients); p99 of %d blocks of starts: %s-%s ms" % (
                len(pooled), len(lat), n, len(blocks), fmt_val(min(bp99), "ms", None),
                fmt_val(max(bp99), "ms", None))
            if n == 64:
                self.row("plan.p99", g, "start -> client armed, per client, 64 clients", "ms",
                         pooled, stat=st, target="<= 3 ms p99",
                         status="PASS" if st["p99"] <= 3 else "MISS", note=note, reason="",
                         p99=True)
                self.row("plan.every", g, "start -> all 64 clients armed", "ms", every)
            else:
                self.row("plan.p99_8", g, "start -> client armed, per client, 8 clients", "ms",
                         pooled, stat=st, note="scaling with the number of clients; " + note,
                         p99=True)
                for r in self.rows:
                    if r["key"] == "plan.p99" and r["status"] == "MISS":
                        r["reason"] = (
                            "the daemon's loop thread hands the 64 replies to nng one after "
                            "another, each a write on that client's pipe and hand-offs to nng's "
                            "threads (one such hand-off costs tens of us here: the nng_send "
                            "baseline), while the 64 woken clients (three thread wake-ups each) "
                            "compete for the same %d cores; with 8 clients the p99 is %.1f ms"
                            % (os.cpu_count(), st["p99"]))

    # ---------------------------------------------------------- 3. alignment

    def fig_align(self):
        nodes = self.reps(16, 4)
        per = 64
        ranks = nodes * per
        windows = self.reps(5, 2)
        g = "3. alignment, %d ranks over %d node daemons" % (ranks, nodes)
        port = self.port()
        # plain tcp:// on loopback, opted in (--insecure-tcp-links)
        c = self.daemon("coord", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links",
                        save_path=os.path.join(self.data_root, "coord", "out"))
        ns, sims = [], []
        for i in range(nodes):
            ns.append(self.daemon("n%d" % i, "--coordinator-url", "tcp://127.0.0.1:%d" % port,
                                  "--insecure-tcp-links"))
        for i, d in enumerate(ns):
            sims.append(self.sim(d, "--layout", "actor:16,rollout:32@4,ref:16", "--rank-offset",
                                 str(i * per), "--replica-offset", str(i * 4), "--steps",
                                 "1000000", "--rate", "10", "--substeps", "1", "--trace-bytes",
                                 "4096", "--host", "host%d" % i, threads=True))
        self.wait_ranks(c, ranks, timeout=120)
        time.sleep(2)  # step rates known everywhere
        self.raw["align_rss_kib"] = {"coordinator": rss_kib(c["pid"]),
                                     "node": [rss_kib(d["pid"]) for d in ns]}
        shares, detail, turn, cpu = [], [], [], []
        daemons = [c["pid"]] + [d["pid"] for d in ns]
        for w in range(windows):
            c0 = sum(cpu_s(p) for p in daemons)
            t0 = time.monotonic()
            out = self.ctl(c, "start", "--next", "2", "--tool", "sim").stdout
            m = re.search(r"started window (\d+) (\S+):", out)
            if not m:
                raise RuntimeError("start: " + out)
            wid, name = m.group(1), m.group(2)
            self.ctl(c, "wait", wid, "--timeout", "120", check=False, timeout=150)
            turn.append(time.monotonic() - t0)
            cpu.append(sum(cpu_s(p) for p in daemons) - c0)
            man = json.load(open(os.path.join(c["save"], "default", name, "manifest.json")))
            first, end = man["window"]["steps"]
            caps = man["captures"]
            same = {cp["rank"] for cp in caps if cp["status"] == "complete" and
                    cp["first_step"] == first and cp["last_step"] == end - 1}
            counts, reasons = {}, {}
            for cp in caps:
                counts[cp["status"]] = counts.get(cp["status"], 0) + 1
                if cp["reason"]:
                    why = re.sub(r"\d+", "N", cp["reason"])
                    reasons[why] = reasons.get(why, 0) + 1
            shares.append(100.0 * len(same) / ranks)
            detail.append({"window": name, "steps": [first, end], "captures": len(caps),
                           "same_steps": len(same), "status": counts, "reasons": reasons,
                           "turnaround_s": turn[-1], "daemons_cpu_s": cpu[-1]})
            time.sleep(0.5)
        self.raw["align"] = detail
        for s in sims:
            self.procs.stop(s, timeout=30)
        for d in ns + [c]:
            self.stop_daemon(d)
        ok = all(x == 100.0 for x in shares)
        bad = [x for x in detail if x["same_steps"] != ranks]
        self.row("align.share", g, "ranks that captured the same steps (--next 2, 10 steps/s)",
                 "%", shares, target="100 %", status="PASS" if ok else "MISS",
                 note="%d windows; ranks as threads (profd-sim --threads), %d per node, loopback "
                      "TCP" % (windows, per),
                 reason=self.short_windows(bad, "same_steps", ranks))
        self.row("align.turnaround", g, "window turnaround: start -> manifest at the "
                 "coordinator", "s", turn, note="%d captures of 4 KiB streamed from %d nodes" % (
                     ranks, nodes))


    # ---------------------------------------------------------- 4. ingest

    def fig_ingest(self):
        d = self.daemon("ingest")
        reps = self.reps(5, 2)
        r = self.run_json([self.bin["ingest"], "--url", d["worker"], "--control", d["control"],
                           "--daemon-pid", str(d["pid"]), "--clients", "64", "--reps", str(reps),
                           "--seconds", "3"], timeout=300)
        self.stop_daemon(d)
        self.raw["ingest"] = r
        g = "4. ingest (64 clients, one daemon, %d cores)" % os.cpu_count()
        ev = [x["events_per_s"] for x in r["reps"]]
        dc = [x["daemon_cpu"] for x in r["reps"]]
        cc = [x["clients_cpu"] for x in r["reps"]]
        med = statistics.median(ev)
        self.row("ingest.rate", g, "step events/s taken in by the daemon", "ev/s", ev,
                 target=">= 200,000 ev/s", status="PASS" if med >= 200000 else "MISS",
                 note="%d events dropped by the clients" % r["events_dropped"],
                 reason="see 'Ingest' in RESULTS.md", fmt="int")
        self.row("ingest.daemon_cpu", g, "daemon CPU (utime+stime / wall)", "cores", dc,
                 note="of %d cores" % os.cpu_count())
        self.row("ingest.clients_cpu", g, "the 64 clients' CPU", "cores", cc,
                 note="mostly the background threads encoding events")
        self.row("ingest.per_cpu", g, "events per daemon CPU-second", "ev/s",
                 [e / max(c, 1e-9) for e, c in zip(ev, dc)], fmt="int")

    # ---------------------------------------------------------- 5. footprint

    def fig_footprint(self):
        g = "5. footprint (one daemon)"
        n, dt = self.reps(5, 3), self.reps(2.0, 1.0)
        d = self.daemon("foot")
        time.sleep(1)
        empty = sample(d["pid"], None, n, dt)
        sim = self.sim(d, "--layout", "worker:1024", "--steps", "1", "--rate", "0.0005",
                       "--substeps", "0", threads=True)
        self.wait_ranks(d, 1024, timeout=120)
        time.sleep(3)  # registration and the latency probes are over
        full = sample(d["pid"], sim.pid, n, dt)
        hwm = hwm_kib(d["pid"])
        self.procs.stop(sim, timeout=60)
        self.stop_daemon(d)
        self.raw["footprint"] = {"empty": empty, "registered_1024": full, "hwm_kib": hwm}
        rss = [x / 1024.0 for x in full["rss_kib"]]
        med = statistics.median(rss)
        self.row("foot.rss", g, "daemon RSS with 1,024 registered ranks", "MiB", rss,
                 target="<= 16 MiB", status="PASS" if med <= 16 else "MISS",
                 note="%.1f MiB with none; peak (VmHWM) %.1f MiB" % (
                     statistics.median(empty["rss_kib"]) / 1024.0, hwm / 1024.0),
                 reason="see the raw figures in bench-results.json")
        w0 = empty["wakeups"]
        self.row("foot.wake_empty", g, "daemon wakeups/s, idle, no client", "/s", w0,
                 target="no busy wakeups", status="PASS" if statistics.median(w0) < 1 else "MISS",
                 note="context switches of all its threads, %d intervals of %g s" % (n, dt),
                 reason="a timer or a thread wakes with nothing to do")
        w1 = full["wakeups"]
        self.row("foot.wake_1024", g, "daemon wakeups/s, 1,024 idle registered ranks", "/s", w1,
                 note="%.2f per rank and second (idle ranks: no heartbeat, one plan long "
                      "poll every 120 s; section 5b)" % (statistics.median(w1) / 1024))
        self.row("foot.cpu_1024", g, "daemon CPU, 1,024 idle registered ranks", "cores",
                 full["cpu"], note="utime+stime over the same intervals")
        self.row("foot.client_wake", g, "client library wakeups/s per idle rank", "/s",
                 [x / 1024 for x in full["peer_wakeups"]],
                 note="profd-sim --threads, 1,024 ranks, its training threads included (they "
                      "sleep in 100 ms slices); the library's alone: section 5b")

    # ---------------------------------------------------------- 5b. idle cost

    def fig_idle(self):
        """1,024 idle ranks (profd-sim --threads, in step 1 for ever): the
        daemon's wakeups (context switches of all its threads) and the
        client library's (those of every thread of the simulator but its
        training threads, named sim-rank: the background threads profd-io,
        nng's threads), per rank and second. Baseline in the same run: the
        simulator's own training threads, which sleep in 100 ms slices."""
        g = "5b. idle cost (1,024 idle ranks, one daemon)"
        n, dt = self.reps(5, 3), self.reps(10.0, 3.0)
        nranks = 1024
        d = self.daemon("idle")
        sim = self.sim(d, "--layout", "worker:%d" % nranks, "--steps", "1", "--rate", "0.0005",
                       "--substeps", "0", threads=True)
        self.wait_ranks(d, nranks, timeout=120)
        time.sleep(self.reps(8, 5))  # registration, latency probes, then the idle sleep
        dw, lw, sw = [], [], []
        for _ in range(n):
            a = ctx_switches(d["pid"])
            lib0, sim0 = ctx_switches_split(sim.pid, "sim-rank")
            t0 = time.monotonic()
            time.sleep(dt)
            t = time.monotonic() - t0
            lib1, sim1 = ctx_switches_split(sim.pid, "sim-rank")
            dw.append((ctx_switches(d["pid"]) - a) / t / nranks)
            lw.append((lib1 - lib0) / t / nranks)
            sw.append((sim1 - sim0) / t / nranks)
        alive = sum(1 for r in self.status(d)["ranks"] if r["state"] != "lost")
        self.procs.stop(sim, timeout=60)
        self.stop_daemon(d)
        self.raw["idle"] = {"daemon_per_rank": dw, "library_per_rank": lw,
                            "sim_thread_per_rank": sw, "alive_after": alive}
        md, ml = statistics.median(dw), statistics.median(lw)
        self.row("idle.daemon", g, "daemon wakeups per idle rank and second", "/s", dw,
                 target="<= 0.2 /rank/s", status="PASS" if md <= 0.2 else "MISS",
                 note="context switches of all the daemon's threads / 1024, %d intervals of "
                      "%g s; %d of %d ranks still active after (liveness: the held plan long "
                      "poll and the connection, no heartbeat)" % (n, dt, alive, nranks),
                 reason="each held long poll (limits.watch_hold_ms) still costs a request "
                        "through nng's threads and the loop when it expires")
        self.row("idle.client", g, "client library wakeups per idle rank and second", "/s", lw,
                 target="<= 1 /client/s", status="PASS" if ml <= 1 else "MISS",
                 note="all threads of profd-sim --threads but its training threads (profd-io, "
                      "nng's) / 1024: the background thread sleeps until the ring is not empty "
                      "(at most 10 s)",
                 reason="the background thread or nng's threads wake with nothing to do")
        self.row("idle.sim_baseline", g, "baseline: a thread sleeping in 100 ms slices", "/s", sw,
                 note="profd-sim's own training threads, per thread")
        self.row("idle.ratio", g, "ratio: library wakeups / baseline thread", "x",
                 [a / max(b, 1e-9) for a, b in zip(lw, sw)])

    # ---------------------------------------------------------- 6. gather

    def make_tree(self):
        large_mib = int(os.environ.get("PROFD_BENCH_LARGE_MIB", "64" if self.quick else "1024"))
        small_n = 400 if self.quick else 2000
        data = os.path.join(self.data_root, "tree")
        small = os.path.join(self.data_root, "tree-small")
        for t in (data, small):
            for r in range(20):
                os.makedirs(os.path.join(t, "rank%02d" % r), exist_ok=True)
        for i in range(small_n):
            p = os.path.join("rank%02d" % (i % 20), "trace-%04d.json" % i)
            body = os.urandom(16384)
            for t in (data, small):  # not hard links: profd refuses those
                with open(os.path.join(t, p), "wb") as f:
                    f.write(body)
        block = os.urandom(16 << 20)
        for k in range(2):
            with open(os.path.join(data, "device-%d.bin" % k), "wb") as f:
                left = large_mib << 20
                while left > 0:
                    n = min(left, len(block))
                    f.write(block[:n])
                    left -= n
                    block = block[1:] + block[:1]  # no two blocks alike
        total = small_n * 16384 + 2 * (large_mib << 20)
        return data, small, small_n, large_mib, total

    def stage(self, src, name, move):
        """`src` itself, moved (the caller moves the gathered tree back), or
        a copy. Not hard links: profd refuses files with more than one."""
        dst = os.path.join(self.data_root, "stage", name)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if move:
            os.rename(src, dst)
        else:
            subprocess.run(["cp", "-a", src, dst], check=True)
            os.sync()  # no writeback of the copy during the timed gather
            warm(dst)  # in the page cache, as a trace just written is
        return dst

    def mount_tmpfs(self, size_bytes):
        path = tempfile.mkdtemp(prefix="profd-bench-tmpfs-", dir="/tmp")
        self.tmpfs = path
        if os.geteuid() == 0:
            mib = size_bytes // (1 << 20) + 512
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % mib, "profd-bench",
                                path], capture_output=True)
            if r.returncode == 0:
                self.tmpfs_mounted = True
                return path, "tmpfs mounted for the run"
        if os.path.isdir("/dev/shm"):
            shutil.rmtree(path, ignore_errors=True)
            self.tmpfs = tempfile.mkdtemp(prefix="profd-bench-", dir="/dev/shm")
            return self.tmpfs, "/dev/shm"
        raise RuntimeError("no tmpfs (mount needs root; no /dev/shm)")

    def gather_once(self, d_client, d_manifest, client, src, stage_file, tag, move=False):
        """One capture whose output is the tree `src` (moved in, or a copy);
        seconds from the end of the capture to the manifest on disk, and
        the manifest."""
        st = self.stage(src, tag, move)
        with open(stage_file, "w") as f:
            f.write(st + "\n")
        out = self.ctl(d_manifest, "start", "--next", "1", "--roles", "benchgather", "--job",
                       "bench", "--tool", "bench").stdout
        m = re.search(r"started window \d+ (\S+):", out)
        if not m:
            raise RuntimeError("start: " + out)
        name = m.group(1)
        line = read_line(client.stdout, 60)
        mm = re.match(r"stop (\S+) (\d+) (\S+)", line or "")
        if not mm or mm.group(1) != name or mm.group(3) != "ok":
            raise RuntimeError("capture did not stop as expected: %r" % line)
        t_stop = int(mm.group(2))
        path = os.path.join(d_manifest["save"], "bench", name, "manifest.json")
        deadline = time.monotonic() + 600
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise RuntimeError("no manifest for %s after 600 s" % name)
            time.sleep(0.001)
        t_done = time.monotonic_ns()
        with open(stage_file, "w") as f:
            f.write("")
        man = json.load(open(path))
        return (t_done - t_stop) / 1e9, man, os.path.dirname(path)

    def check_manifest(self, man, nfiles, nbytes, checksum=True):
        caps = man["captures"]
        if len(caps) != 1 or caps[0]["status"] != "complete":
            raise RuntimeError("capture not complete: %s" % json.dumps(caps)[:300])
        # the library's own markers file is not part of the staged tree
        files = [f for f in caps[0]["files"]
                 if not os.path.basename(f["path"]).startswith("profd-markers-")]
        got = sum(f["bytes"] for f in files)
        if len(files) != nfiles or got != nbytes:
            raise RuntimeError("manifest lists %d files, %d bytes; expected %d, %d" % (
                len(files), got, nfiles, nbytes))
        # a file moved by rename is not read again: its entry says "moved", no checksum
        bad = [f for f in files if not f.get("moved") and
               not (f.get("checksum") or "").startswith("xxh64:")]
        if checksum and bad:
            raise RuntimeError("manifest without checksums: %s" % json.dumps(bad[:3]))

    def fig_gather(self):
        g = "6. gather"
        reps = self.reps(5, 2)
        data, small, small_n, large_mib, total = self.make_tree()
        nfiles = small_n + 2
        small_bytes = small_n * 16384
        tmpfs, tmpfs_how = self.mount_tmpfs(3 * total)
        self.raw["gather_tree"] = {"small_files": small_n, "small_bytes": 16384,
                                   "large_files": 2, "large_mib": large_mib,
                                   "total_bytes": total, "disk": fs_type(self.data_root),
                                   "tmpfs": tmpfs_how}
        stage_file = os.path.join(self.run_root, "stage-path")
        open(stage_file, "w").close()
        res = {}

        def client_for(d):
            p = self.procs.start([self.bin["gather"], "--url", d["worker"], "--stage-file",
                                  stage_file, "--rate", "20"],
                                 log_path=os.path.join(self.run_root, "gather.log"),
                                 stdout=subprocess.PIPE)
            self.wait_ranks(d, 1, job="bench")
            return p

        # same file system: rename, then checksums (default) or none
        nochk = os.path.join(self.run_root, "nochecksum.yaml")
        with open(nochk, "w") as f:
            f.write("checksum: none\n")
        for label, extra, chk in (("xxh64", [], True), ("none", ["--config", nochk], False)):
            d = self.daemon("same-" + label, *extra)
            cl = client_for(d)
            for tree, n, b, key in ((small, small_n, small_bytes, "small"),
                                    (data, nfiles, total, "full")):
                vals, renamed = [], []
                for i in range(reps + 1):  # the first is a warm-up
                    ino = tree_inode(tree)
                    t, man, wdir = self.gather_once(d, d, cl, tree, stage_file,
                                                    "s%s%s%d" % (label, key, i), move=True)
                    gathered = os.path.join(wdir, man["captures"][0]["dir"])
                    renamed.append(tree_inode(gathered) == ino)
                    os.rename(gathered, tree)  # the tree again, for the next round
                    self.check_manifest(man, n, b, chk)
                    shutil.rmtree(wdir)
                    if i:
                        vals.append(t)
                res["same_%s_%s" % (label, key)] = vals
                res["same_%s_%s_renamed" % (label, key)] = renamed  # one per gathering
            self.procs.stop(cl)
            self.stop_daemon(d)

        # another file system: spool on disk, save_path on tmpfs; vs cp -r
        d = self.daemon("copy", "--spool", os.path.join(self.data_root, "copy-spool"),
                        save_path=os.path.join(tmpfs, "copy-out"))
        d0 = self.daemon("copy0", "--config", nochk, "--spool",
                         os.path.join(self.data_root, "copy0-spool"),
                         save_path=os.path.join(tmpfs, "copy0-out"))
        cl, cl0 = client_for(d), client_for(d0)
        cps, profd_t, profd0 = [], [], []
        for i in range(reps + 1):
            # cp -r copies a staged tree too, prepared as profd's is
            src = self.stage(data, "cp-src", False)
            dst = os.path.join(tmpfs, "cp-%d" % i)
            t0 = time.monotonic()
            subprocess.run(["cp", "-r", src, dst], check=True)
            tc = time.monotonic() - t0
            shutil.rmtree(dst)
            shutil.rmtree(src)
            t, man, wdir = self.gather_once(d, d, cl, data, stage_file, "c%d" % i)
            self.check_manifest(man, nfiles, total)
            shutil.rmtree(wdir)
            t0_, man, wdir = self.gather_once(d0, d0, cl0, data, stage_file, "z%d" % i)
            self.check_manifest(man, nfiles, total, False)
            shutil.rmtree(wdir)
            if i:
                cps.append(tc)
                profd_t.append(t)
                profd0.append(t0_)
        res["copy_profd"], res["copy_cp"], res["copy_profd_none"] = profd_t, cps, profd0
        for p, dd in ((cl, d), (cl0, d0)):
            self.procs.stop(p)
            self.stop_daemon(dd)

        # across nodes: node daemon -> coordinator over loopback TCP; vs tar | socat
        # (plain tcp://, opted in with --insecure-tcp-links, like socat)
        port = self.port()
        c = self.daemon("gcoord", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links", save_path=os.path.join(tmpfs, "coord-out"))
        n = self.daemon("gnode", "--coordinator-url", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links")
        cl = client_for(n)
        self.wait_ranks(c, 1, job="bench")
        raw, streamed = [], []
        for i in range(reps + 1):
            tr = raw_stream(data, os.path.join(tmpfs, "raw-%d" % i), self.port())
            shutil.rmtree(os.path.join(tmpfs, "raw-%d" % i))
            t, man, wdir = self.gather_once(n, c, cl, data, stage_file, "n%d" % i)
            self.check_manifest(man, nfiles, total)
            shutil.rmtree(wdir)
            if i:
                raw.append(tr)
                streamed.append(t)
        res["node_profd"], res["node_raw"] = streamed, raw
        self.procs.stop(cl)
        self.stop_daemon(n)
        self.stop_daemon(c)
        self.raw["gather"] = res

        mib = total / 2**20
        tree = "%d x 16 KiB + 2 x %d MiB = %.0f MiB" % (small_n, large_mib, mib)
        ms = lambda v: [x * 1000 for x in v]
        # renamed: every gathering of the full tree (warm-up included), not the last one
        def renamed(label):
            flags = res["same_%s_full_renamed" % label]
            return all(flags), "renamed (same inodes) in %d of %d gatherings" % (sum(flags),
                                                                                 len(flags))
        ren_none, ren_none_note = renamed("none")
        ren_x, ren_x_note = renamed("xxh64")
        ratio_none = statistics.median(res["same_none_full"]) / statistics.median(
            res["same_none_small"])
        self.row("gather.same_none_small", g, "same FS, checksum none: %d small files" % small_n,
                 "ms", ms(res["same_none_small"]))
        self.row("gather.same_none_full", g, "same FS, checksum none: + 2 x %d MiB" % large_mib,
                 "ms", ms(res["same_none_full"]), target="rename, O(1) in bytes",
                 status="PASS" if ren_none and ratio_none < 2 else "MISS",
                 note="%s; %.2fx the small tree's time for %.0fx its bytes" % (
                     ren_none_note, ratio_none, total / small_bytes),
                 reason="the gather copied (%s)" % ren_none_note if not ren_none else
                 "the gather grew with the bytes")
        ratio_x = statistics.median(res["same_xxh64_full"]) / statistics.median(
            res["same_xxh64_small"])
        rate = (total - small_bytes) / 2**30 / max(1e-9, statistics.median(
            res["same_xxh64_full"]) - statistics.median(res["same_xxh64_small"]))
        self.row("gather.same_xxh64_small", g, "same FS, xxh64 (default): %d small files" %
                 small_n, "ms", ms(res["same_xxh64_small"]))
        self.row("gather.same_xxh64_full", g, "same FS, xxh64 (default): + 2 x %d MiB" %
                 large_mib, "ms", ms(res["same_xxh64_full"]), target="rename, O(1) in bytes",
                 status="PASS" if ren_x and ratio_x < 2 else "MISS",
                 note="%s; %.2fx the small tree's time; checksum pass ~%.1f GiB/s" % (
                     ren_x_note, ratio_x, rate),
                 reason="the gather copied (%s)" % ren_x_note if not ren_x else
                 "the rename is O(1), but the manifest's checksums are computed after "
                 "it by reading every byte (checksum: none avoids it, row above)")
        cr = [a / b for a, b in zip(res["copy_cp"], res["copy_profd"])]
        self.row("gather.copy_profd", g, "other FS (disk -> tmpfs), profd: " + tree, "s",
                 res["copy_profd"], note="%.0f MiB/s; copy and xxh64 in one pass; the spool copy is removed after "
                 "the manifest" % (
                     mib / statistics.median(res["copy_profd"])))
        self.row("gather.copy_cp", g, "baseline: cp -r of the same tree, same FS pair", "s",
                 res["copy_cp"], note="%.0f MiB/s" % (mib / statistics.median(res["copy_cp"])))
        cr0 = [a / b for a, b in zip(res["copy_cp"], res["copy_profd_none"])]
        self.row("gather.copy_ratio", g, "ratio: profd throughput / cp -r", "x", cr,
                 target=">= 0.9x cp -r", status="PASS" if statistics.median(cr) >= 0.9 else
                 "MISS", note="paired by repetition",
                 reason="not the checksum (it runs on a second thread; with checksum: none "
                        "the copy is %.2fx cp -r, row below): profd opens every path "
                        "confined (no symlink followed), writes each file as .part and "
                        "renames it, and its figure includes the result's trip to the daemon, "
                        "which cp -r does not" % statistics.median(cr0))
        self.row("gather.copy_ratio_none", g, "ratio: profd with checksum: none / cp -r", "x",
                 cr0, note="what the checksum costs")
        nr = [a / b for a, b in zip(res["node_raw"], res["node_profd"])]
        self.row("gather.node_profd", g, "across nodes (loopback TCP), profd: " + tree, "s",
                 res["node_profd"], note="%.0f MiB/s; node daemon -> coordinator, xxh64 "
                 "checked" % (mib / statistics.median(res["node_profd"])))
        self.row("gather.node_raw", g, "baseline: tar | socat -> socat | tar -x, same bytes",
                 "s", res["node_raw"], note="%.0f MiB/s, no checksum" % (
                     mib / statistics.median(res["node_raw"])))
        self.row("gather.node_ratio", g, "ratio: profd throughput / raw TCP stream", "x", nr,
                 target=">= 0.8x raw TCP", status="PASS" if statistics.median(nr) >= 0.8 else
                 "MISS", note="paired by repetition", reason="see 'Gather' in RESULTS.md")

    # ---------------------------------------------------------- 7. overhead

    def fig_overhead(self):
        g = "7. training overhead (profd idle vs without)"
        reps = self.reps(8, 2)
        d = self.daemon("over")
        steps = self.reps(60, 30)
        sim_ratio, with_t, without_t = [], [], []
        for i in range(reps + 1):
            pair = {}
            for mode in (("with", "without") if i % 2 else ("without", "with")):
                url = d["worker"] if mode == "with" else "ipc:///nonexistent-profd-bench/w.sock"
                p = self.sim(d, "--layout", "actor:2", "--work", "1500", "--substeps", "4",
                             "--steps", str(steps), "--report", url=url, stdout=subprocess.PIPE)
                out, _ = p.communicate(timeout=300)
                self.procs.procs.remove(p)
                med = [float(x) for x in re.findall(r"step time median ([0-9.]+) us",
                                                     out.decode())]
                if len(med) != 2:
                    raise RuntimeError("profd-sim --report: %r" % out[-300:])
                pair[mode] = statistics.median(med) / 1000.0
            if i:
                with_t.append(pair["with"])
                without_t.append(pair["without"])
                sim_ratio.append(pair["with"] / pair["without"])
        self.row("over.sim_with", g, "profd-sim step, 2 ranks, CPU-bound, daemon idle", "ms",
                 with_t)
        self.row("over.sim_without", g, "profd-sim step, same, no daemon", "ms", without_t)
        self.row("over.sim_ratio", g, "ratio: profd-sim step, daemon idle / no daemon", "x",
                 sim_ratio, note="both ranks busy on the %d cores" % os.cpu_count())

        env_base = dict(os.environ, PYTHONPATH=os.path.join(self.build, "python"),
                        PYTHONDONTWRITEBYTECODE="1", PROFD_RUN_DIR=d["run"])
        gsteps = self.reps(40, 20)
        reps = self.reps(6, 2)
        g_ratio, g_with, g_without = [], [], []
        example = os.path.join(SOURCE, "client", "python", "examples", "grpo_sim.py")
        try:
            probe = subprocess.run([PY, "-c", "import torch"], capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            probe = None
        if probe is None or probe.returncode != 0:
            self.not_run("overhead-torch", "PyTorch does not import under %s" % PY)
            self.stop_daemon(d)
            return
        for i in range(reps + 1):
            pair = {}
            for mode in (("with", "without") if i % 2 else ("without", "with")):
                env = dict(env_base)
                args = [PY, example, "--steps", str(gsteps), "--job", "bench"]
                if mode == "with":
                    args += ["--wait-daemon", "10"]
                else:
                    env["PROFD_LIB"] = "/nonexistent-profd-bench/libprofd.so"
                r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
                m = re.search(r"grpo_sim: \d+ steps on \d+ ranks in ([0-9.]+) s", r.stdout)
                if r.returncode != 0 or not m:
                    raise RuntimeError("grpo_sim: %s" % (r.stdout + r.stderr)[-400:])
                pair[mode] = float(m.group(1)) / gsteps * 1000.0
            if i:
                g_with.append(pair["with"])
                g_without.append(pair["without"])
                g_ratio.append(pair["with"] / pair["without"])
        self.stop_daemon(d)
        self.row("over.grpo_with", g, "grpo_sim.py step (4 ranks, torch CPU), profd idle", "ms",
                 g_with)
        self.row("over.grpo_without", g, "grpo_sim.py step, without profd (library not "
                 "loaded)", "ms", g_without)
        self.row("over.grpo_ratio", g, "ratio: grpo_sim step, profd idle / without", "x",
                 g_ratio)

    # ---------------------------------------------------------- 8. turnaround

    def cluster_up(self, tag, nodes, per, rate=10, log_level="warn", nice=10, flush_ms=0,
                   node_args=(), ranks_per_thread=1, coord_args=()):
        """A coordinator and `nodes` node daemons on loopback TCP, each with
        `per` ranks in one profd-sim --threads process per node (a training
        thread per `ranks_per_thread` ranks, a libprofd client per rank).
        Returns (coordinator, nodes, sims)."""
        port = self.port()
        c = self.daemon(tag + "c", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links", *coord_args, log_level=log_level,
                        save_path=os.path.join(self.data_root, tag + "c", "out"))
        ns, sims = [], []
        for i in range(nodes):
            ns.append(self.daemon("%sn%d" % (tag, i), "--coordinator-url",
                                  "tcp://127.0.0.1:%d" % port, "--insecure-tcp-links",
                                  *node_args, log_level=log_level))
        roles = "actor:%d,rollout:%d@%d,ref:%d" % (per // 4, per // 2, max(1, per // 16),
                                                    per - per // 4 - per // 2)
        for i, d in enumerate(ns):
            a = ["nice", "-n", str(nice), self.bin["sim"], "--url", d["worker"], "--threads",
                 "--layout", roles,
                 "--rank-offset", str(i * per), "--replica-offset", str(i * max(1, per // 16)),
                 "--steps", "1000000", "--rate", str(rate), "--substeps", "1",
                 "--trace-bytes", "4096", "--host", "host%d" % i]
            if flush_ms:
                a += ["--flush-ms", str(flush_ms)]
            if ranks_per_thread > 1:
                a += ["--ranks-per-thread", str(ranks_per_thread)]
            sims.append(self.procs.start(a, log_path=os.path.join(self.run_root, "sim.log")))
        return c, ns, sims

    def window_end_us(self, c, name, man):
        """The window's end on CLOCK_MONOTONIC: the latest stop of its
        captures, which the sim backend writes into each trace
        (profd_end_us, the moment the rank's last step of the window ended)."""
        end = 0
        base = os.path.join(c["save"], "default", name)
        for cp in man["captures"]:
            for f in cp.get("files") or []:
                if not f["path"].endswith(".pt.trace.json") or not cp.get("dir"):
                    continue
                try:
                    with open(os.path.join(base, cp["dir"], f["path"]), "rb") as fh:
                        fh.seek(max(0, f["bytes"] - 200))
                        m = re.search(rb'"profd_end_us":(\d+)', fh.read())
                except OSError:
                    continue
                if m:
                    end = max(end, int(m.group(1)))
        return end

    def one_window(self, c, daemons, ranks, idle_rate):
        """profctl start --next 2 at the coordinator; the manifest's arrival
        polled every 2 ms. Returns the window's figures."""
        c0 = sum(cpu_s(p) for p in daemons)
        t0 = time.monotonic()
        out = self.ctl(c, "start", "--next", "2", "--tool", "sim").stdout
        m = re.search(r"started window (\d+) (\S+):", out)
        if not m:
            raise RuntimeError("start: " + out)
        name = m.group(2)
        path = os.path.join(c["save"], "default", name, "manifest.json")
        deadline = t0 + 180
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise RuntimeError("no manifest for %s after 180 s" % name)
            time.sleep(0.002)
        t1 = time.monotonic()
        cpu = sum(cpu_s(p) for p in daemons) - c0
        man = json.load(open(path))
        first, end = man["window"]["steps"]
        caps = man["captures"]
        same = {cp["rank"] for cp in caps if cp["status"] == "complete" and
                cp["first_step"] == first and cp["last_step"] == end - 1}
        reasons = {}
        for cp in caps:
            if cp["reason"]:
                why = re.sub(r"\d+", "N", cp["reason"])
                reasons[why] = reasons.get(why, 0) + 1
        wend = self.window_end_us(c, name, man) / 1e6
        return {"window": name, "steps": [first, end], "captures": len(caps),
                "aligned": len(same), "aligned_pct": 100.0 * len(same) / ranks,
                "reasons": reasons, "start_to_manifest_s": t1 - t0,
                "end_to_manifest_s": (t1 - wend) if wend else None,
                "daemons_cpu_s": cpu, "daemons_cpu_net_s": cpu - idle_rate * (t1 - t0)}

    def fig_turnaround(self):
        nodes = self.reps(16, 4)
        per = 64
        ranks = nodes * per
        windows = self.reps(5, 2)
        g = "8. turnaround, %d ranks over %d node daemons" % (ranks, nodes)
        c, ns, sims = self.cluster_up("t", nodes, per)
        self.wait_ranks(c, ranks, timeout=120)
        time.sleep(2)  # step rates known everywhere
        daemons = [c["pid"]] + [d["pid"] for d in ns]
        res = []
        for w in range(windows):
            # the daemons' own rate with no window (1,024 ranks' step events)
            a, t = sum(cpu_s(p) for p in daemons), time.monotonic()
            time.sleep(3)
            idle_rate = (sum(cpu_s(p) for p in daemons) - a) / (time.monotonic() - t)
            r = self.one_window(c, daemons, ranks, idle_rate)
            r["idle_cpu_cores"] = idle_rate
            res.append(r)
            log("turnaround: %s" % json.dumps(r))
        self.raw["turnaround"] = res
        for s in sims:
            self.procs.stop(s, timeout=30)
        for d in ns + [c]:
            self.stop_daemon(d)
        self.turnaround_rows("turn", g, res, ranks, nodes, 1.0, "<= 1 s after the window's end")
        per_cap = [1000.0 * r["daemons_cpu_net_s"] / ranks for r in res]
        self.row("turn.cpu_per_capture", g, "daemons' CPU per capture, all %d daemons, net of "
                 "their idle rate" % (nodes + 1), "ms", per_cap, target="<= 0.5 ms",
                 status="PASS" if statistics.median(per_cap) <= 0.5 else "MISS",
                 note="utime+stime from /proc over start -> manifest, minus the same daemons' "
                      "rate over the 3 s before (step events of %d ranks at 10 steps/s: %.2f "
                      "cores)" % (ranks, statistics.median(r["idle_cpu_cores"] for r in res)),
                 reason=self.turn_cause("cpu"))
        self.row("turn.cpu_total", g, "daemons' CPU, start -> manifest, gross", "s",
                 [r["daemons_cpu_s"] for r in res])

    CAUSES = {
        "turn": "latency, not CPU: the window costs the daemons little CPU (row below), but "
                "the 2 cores are saturated by the simulated ranks' steady traffic (perf -a "
                "during a window: profd-sim 41 %, the 17 daemons' loops 26 % and nng threads "
                "27 %: context switches and futexes of ~20,000 messages/s of step events and "
                "heartbeats); every hop of a result or a chunk waits for a loop thread to be "
                "scheduled (strace of a node: 10-25 ms from a request's arrival to its reply), "
                "so a node's 64 results and 64 files take seconds to reach the coordinator",
        "cpu": "the daemons' steady cost of the ranks' events, not the window",
        "scale": "as for 1,024 ranks: the cores are saturated by the simulated ranks and "
                 "the daemons' per-message work; each hop waits to be scheduled",
        "scale_rss": "the coordinator keeps every member's captures and incoming files of "
                     "the window in memory until its manifest is written, and finished windows "
                     "(up to 256) with their members after: at 8,192 ranks (2026-11-26, 01e86cc) "
                     "its RSS was 30 MiB before the first window and 57, 78, 87 MiB after each "
                     "of 3 (~20 MiB kept per finished window; ~640 bytes per incoming file of "
                     "it were a path buffer and a hash state, heap and freed since), the peaks "
                     "20-25 MiB above while a manifest, steps.json and report.html are built "
                     "(heaptrack, 1,024 ranks, peak heap 17.5 MiB: report.html buffer 4.2, "
                     "the state save's JSON 4.4, incoming files 2.3, step history 1.6, window "
                     "members 1.1, registry 0.7)",
        "scale_16k": "measured 2026-11-26 on 2 cores, twice: 16,384 ranks over 256 node "
                     "daemons did not finish starting up in 10 minutes; the simulation's own "
                     "threads (16,384 libprofd background threads, one per simulated rank, "
                     "and ~6,700 nng threads of 513 processes) kept ~3,000-4,000 tasks "
                     "runnable (one sample: 2,061 profd-io, 867 nng:task), 66 % system time, "
                     "the node daemons' loops stalled 2-14 s and their links timed out, so "
                     "ranks kept registering again; an earlier run (before this day's "
                     "changes) registered every rank but its first window did not complete, "
                     "58 % of the coordinator's loop in state saves re-encoding all 16,384 "
                     "members (saves now re-encode only changed members: 4 % of those "
                     "written at 8,192 ranks). At 8,192 ranks over 128 node daemons "
                     "(PROFD_BENCH_SCALE_NODES=128, 01e86cc) the run started in 25 s and "
                     "completed 3 windows in 322 s: 100 % aligned, end -> manifest "
                     "7.1-11.8 s, coordinator VmHWM 74-109 MiB, state saves 2.2-3.0 s of its "
                     "loop per window",
        "gather_node": "one chunk in flight per file (read on the thread pool, send, write "
                       "and hash on the coordinator's pool, ack, then the next): two large "
                       "files stream as two stop-and-wait flows of 1 MiB chunks, each hop "
                       "waiting for a thread to be scheduled (worse beside other load); "
                       "tar|socat is one continuous stream",
        "gather_node_cpu": "every chunk crosses the loop and the thread pool on both sides "
                           "(JSON header, a copy into the job, xxh64 on both sides)",
        "gather_copy": "profd writes each file as .part through confined paths and renames "
                       "it, and hashes what it copies; its figure includes the result's trip "
                       "to the daemon",
        "gather_copy_cpu": "xxh64 of every byte besides the copy (cp -r does not hash)",
        "late_plan": "the plan reached those ranks after the window's start step: --next 2 at "
                     "10 steps/s leaves 200 ms for the start to travel profctl -> coordinator "
                     "-> node -> rank (the coordinator's view of the steps is up to one summary "
                     "old), and on 2 cores saturated by the run one window in several missed "
                     "it; measured 2026-11-26 with the code before that day's changes too "
                     "(50ae320, 10 windows: one with 40 of 1024)",
    }

    def turn_cause(self, what):
        return self.CAUSES.get(what, "cause not measured")

    def short_windows(self, bad, key, ranks):
        """The reason of an alignment row: its windows short of 100 %, and
        what is known of a plan that arrived late."""
        text = "windows short of 100 %%: %s" % "; ".join(
            "%s: %d of %d, %s" % (w["window"], w[key], ranks, json.dumps(w["reasons"]))
            for w in bad)
        late = all(set(w["reasons"]) <= {"plan arrived at step N, after start step N"}
                   for w in bad)
        return text + ("; " + self.CAUSES["late_plan"] if bad and late else "")

    def turnaround_rows(self, key, g, res, ranks, nodes, limit, target):
        shares = [r["aligned_pct"] for r in res]
        bad = [r for r in res if r["aligned"] != ranks]
        self.row(key + ".aligned", g, "ranks that captured the same steps (--next 2)", "%",
                 shares, target="100 %", status="PASS" if not bad else "MISS",
                 note="%d windows" % len(res),
                 reason=self.short_windows(bad, "aligned", ranks))
        ends = [r["end_to_manifest_s"] for r in res if r["end_to_manifest_s"] is not None]
        self.row(key + ".end", g, "window's end -> manifest at the coordinator", "s", ends,
                 target=target, status="PASS" if ends and max(ends) <= limit else "MISS",
                 note="end: the latest capture stop (profd_end_us in the sim traces, "
                      "CLOCK_MONOTONIC); manifest polled every 2 ms",
                 reason=self.turn_cause(key))
        self.row(key + ".start", g, "profctl start --next 2 -> manifest", "s",
                 [r["start_to_manifest_s"] for r in res],
                 note="%d captures of 4 KiB from %d nodes" % (ranks, nodes))

    # ---------------------------------------------------------- 9. scale

    def fig_scale(self):
        """16,384 ranks over 256 node daemons on this machine. Real: the
        coordinator and the 256 node daemons (profd processes on loopback
        TCP), the protocol between them and with the ranks, and each rank's
        libprofd client (its own client, background thread and socket: it
        registers, long-polls its plan, sends its step and phase events,
        captures through the client's engine and delivers its results).
        Simulated: the training loops (profd-sim --threads, one process per
        node; one training thread drives 64 ranks in turn, each rank's
        steps, phases and sub-steps at its own times: 0.05 step/s by default,
        PROFD_BENCH_SCALE_RATE), the traces (written by the sim backend,
        4 KiB each) and the machines (all of it on this machine's cores,
        events flushed every 5 s)."""
        full = 256 if self.args.only else 64  # see DEFAULT
        nodes = int(os.environ.get("PROFD_BENCH_SCALE_NODES", self.reps(full, 16)))
        per = 64
        rpt = 64  # ranks per training thread
        ranks = nodes * per
        rate = float(os.environ.get("PROFD_BENCH_SCALE_RATE", "0.05"))
        flush = int(os.environ.get("PROFD_BENCH_SCALE_FLUSH_MS", "5000"))
        windows = self.reps(3, 1)
        g = "9. scale, %d ranks over %d node daemons" % (ranks, nodes)
        # Every thread is a task of the kernel. A rank is one libprofd
        # background thread (profd-io, one per client: the library has no
        # shared one) and 1/64 of a training thread; each process (daemon or
        # simulator) also has nng's pools, measured here on a probe daemon
        # (18 threads on 2 cores: 13 nng, 5 profd). 16,384 ranks: 16,384
        # profd-io + 256 training threads, where 2 threads per rank were
        # 32,768 (= kernel.pid_max here: pthread_create failed, 'profd_open:
        # out of memory', load average ~8,900 in a first try).
        pid_max = int(open("/proc/sys/kernel/pid_max").read())
        threads_max = int(open("/proc/sys/kernel/threads-max").read())
        probe = self.daemon("sprobe")
        per_proc = len(os.listdir("/proc/%d/task" % probe["pid"]))
        self.stop_daemon(probe)
        tasks_now = len(glob.glob("/proc/[0-9]*/task/[0-9]*"))
        sim_threads = nodes * ((per + rpt - 1) // rpt)
        need = ranks + sim_threads + per_proc * (2 * nodes + 1) + tasks_now + 500
        log("scale: ~%d tasks: %d profd-io (one per rank) + %d sim-rank + %d x %d per "
            "process (nng pools and own threads, from a probe daemon) + %d in /proc now "
            "+ 500; kernel.pid_max %d, threads-max %d" % (
                need, ranks, sim_threads, 2 * nodes + 1, per_proc, tasks_now, pid_max,
                threads_max))
        if need > min(pid_max, threads_max):
            raise RuntimeError(
                "%d ranks need ~%d tasks (%d profd-io: one libprofd background thread per "
                "rank; %d training threads of %d ranks each; %d processes of ~%d threads; "
                "%d tasks in /proc already), over kernel.pid_max %d / threads-max %d here" % (
                    ranks, need, ranks, sim_threads, rpt, 2 * nodes + 1, per_proc, tasks_now,
                    pid_max, threads_max))
        t0 = time.monotonic()
        # summaries every second, not every 100 ms: 256 nodes x 10/s of them is
        # 2,560 messages/s of step times for the coordinator to parse
        conf = os.path.join(self.run_root, "scale-node.yaml")
        with open(conf, "w") as f:
            f.write("coordinator:\n  summary_ms: 1000\n")
        # the coordinator's registry holds every rank of the job (4,096 by default)
        cconf = os.path.join(self.run_root, "scale-coord.yaml")
        with open(cconf, "w") as f:
            f.write("limits:\n  max_clients: %d\n" % max(4096, ranks))
        murl = "http://127.0.0.1:%d" % self.port()  # the coordinator's state saves
        c, ns, sims = self.cluster_up("s", nodes, per, rate=rate, nice=10, flush_ms=flush,
                                      node_args=("--config", conf), ranks_per_thread=rpt,
                                      coord_args=("--config", cconf, "--metrics", murl))
        self.wait_ranks(c, ranks, timeout=600)
        up_s = time.monotonic() - t0
        sim_tasks = sum(len(os.listdir("/proc/%d/task" % p.pid)) for p in sims)
        time.sleep(5)  # step rates known everywhere
        daemons = [c["pid"]] + [d["pid"] for d in ns]
        hwm0 = hwm_kib(c["pid"])
        res = []
        for w in range(windows):
            s0 = state_saves(murl)
            r = self.one_window(c, daemons, ranks, 0.0)
            s1 = state_saves(murl)
            r["state_saves"] = {k: s1[k] - s0[k] for k in s1}
            r["coord_hwm_kib"] = hwm_kib(c["pid"])
            r["coord_rss_kib"] = rss_kib(c["pid"])
            path = os.path.join(c["save"], "default", r["window"], "manifest.json")
            r["manifest_bytes"] = os.path.getsize(path)
            res.append(r)
            log("scale: %s" % json.dumps(r))
            time.sleep(2)
        node_rss = sorted(rss_kib(d["pid"]) for d in ns)
        self.raw["scale"] = {"windows": res, "up_s": up_s, "coord_hwm_before_kib": hwm0,
                             "node_rss_kib_median": node_rss[len(node_rss) // 2],
                             "ranks_per_thread": rpt, "sim_threads": sim_tasks,
                             "tasks_estimated": need}
        for s in sims:
            self.procs.stop(s, timeout=60)
        for d in ns + [c]:
            self.stop_daemon(d)
        self.turnaround_rows("scale", g, res, ranks, nodes, 3.0, "<= 3 s after the window's end")
        hwm = [r["coord_hwm_kib"] / 1024.0 for r in res]
        self.row("scale.coord_hwm", g, "coordinator peak RSS (VmHWM)", "MiB", hwm,
                 target="<= 64 MiB", status="PASS" if max(hwm) <= 64 else "MISS",
                 note="%.1f MiB before the first window, with %d ranks registered; a node "
                      "daemon %.1f MiB" % (hwm0 / 1024.0, ranks, node_rss[len(node_rss) // 2] /
                                           1024.0),
                 reason=self.turn_cause("scale_rss"))
        grow = [(r["coord_hwm_kib"] - hwm0) / 1024.0 for r in res]
        self.row("scale.manifest", g, "coordinator peak RSS growth over the windows vs the "
                 "manifest's size", "MiB", grow,
                 note="manifest %.1f MiB for %d captures; written streaming from the window's "
                      "records" % (res[0]["manifest_bytes"] / 1048576.0, ranks))
        sv = [r["state_saves"] for r in res]
        self.row("scale.saves", g, "coordinator's loop time in state saves, per window", "s",
                 [x["seconds"] for x in sv],
                 note="%d-%d saves a window; %.1f %% of start -> manifest" % (
                     min(x["saves"] for x in sv), max(x["saves"] for x in sv), 100.0 * statistics.median(x["seconds"] / r["start_to_manifest_s"]
                                               for x, r in zip(sv, res))))
        self.row("scale.save_encoded", g, "member records a state save encoded anew / wrote",
                 "%", [100.0 * x["encoded"] / max(1, x["encoded"] + x["unchanged"]) for x in sv],
                 note="the rest came unchanged from the last save (profd_state_members_total); "
                      "before 2026-11-26 every save encoded every member of the window")
        if ranks < 16384:
            self.row("scale.target", g, "16,384 ranks over 256 node daemons (the target's size)",
                     "ranks", [], target="a window aligned, <= 3 s, <= 64 MiB",
                     status="MISS", note="this run: %d ranks; --only scale runs 16,384" % ranks,
                     reason=self.turn_cause("scale_16k"))
        self.row("scale.setup", g, "start-up: %d daemons up, %d ranks registered" % (
            nodes + 1, ranks), "s", [up_s],
                 note="real: the %d daemons (loopback TCP, nodes' coordinator.summary_ms 1000), "
                      "the protocol, a libprofd client per rank (%d profd-io threads); "
                      "simulated: the training loops, %d ranks per training thread in %d "
                      "profd-sim processes (one per node, niced 10, %.3g steps/s, flush every "
                      "%d ms; %d threads in all), traces by the sim backend" % (
                          nodes + 1, ranks, rpt, nodes, rate, flush, sim_tasks))

    # ---------------------------------------------------------- 10. gather, idle and loaded

    def busy(self, n):
        """n CPU-bound processes at the daemons' priority (a competing job)."""
        return [self.procs.start([PY, "-c", "while True: pass"]) for _ in range(n)]

    def fig_gatherload(self):
        """Across nodes (vs tar | socat) and to another file system (vs cp -r),
        on an idle machine and beside a CPU-bound process on each core, with
        the CPU-seconds per GiB of each side."""
        g = "10. gather, idle and with the cores loaded"
        reps = self.reps(3, 1)
        data, small, small_n, large_mib, total = self.make_tree()
        nfiles = small_n + 2
        gib = total / 2**30
        tmpfs, tmpfs_how = self.mount_tmpfs(3 * total)
        stage_file = os.path.join(self.run_root, "stage-path-l")
        open(stage_file, "w").close()

        def client_for(d):
            p = self.procs.start([self.bin["gather"], "--url", d["worker"], "--stage-file",
                                  stage_file, "--rate", "20"],
                                 log_path=os.path.join(self.run_root, "gather.log"),
                                 stdout=subprocess.PIPE)
            self.wait_ranks(d, 1, job="bench")
            return p

        def children_cpu():
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return r.ru_utime + r.ru_stime

        port = self.port()
        c = self.daemon("lcoord", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links", save_path=os.path.join(tmpfs, "lcoord-out"))
        n = self.daemon("lnode", "--coordinator-url", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links")
        cn = client_for(n)
        self.wait_ranks(c, 1, job="bench")
        d = self.daemon("lcopy", "--spool", os.path.join(self.data_root, "lcopy-spool"),
                        save_path=os.path.join(tmpfs, "lcopy-out"))
        cd = client_for(d)
        res = {}
        for cond in ("idle", "loaded"):
            hogs = self.busy(os.cpu_count() or 2) if cond == "loaded" else []
            r = {k: [] for k in ("node", "raw", "node_cpu", "raw_cpu", "copy", "cp", "copy_cpu",
                                 "cp_cpu")}
            for i in range(reps + 1):  # the first is a warm-up
                a = children_cpu()
                tr = raw_stream(data, os.path.join(tmpfs, "lraw-%d" % i), self.port())
                raw_cpu = children_cpu() - a
                shutil.rmtree(os.path.join(tmpfs, "lraw-%d" % i))
                a = cpu_s(n["pid"]) + cpu_s(c["pid"])
                t, man, wdir = self.gather_once(n, c, cn, data, stage_file, "ln%s%d" % (cond, i))
                node_cpu = cpu_s(n["pid"]) + cpu_s(c["pid"]) - a
                self.check_manifest(man, nfiles, total)
                shutil.rmtree(wdir)
                src = self.stage(data, "lcp-src", False)
                dst = os.path.join(tmpfs, "lcp-%d" % i)
                a, t0 = children_cpu(), time.monotonic()
                subprocess.run(["cp", "-r", src, dst], check=True)
                tc, cp_cpu = time.monotonic() - t0, children_cpu() - a
                shutil.rmtree(dst)
                shutil.rmtree(src)
                a = cpu_s(d["pid"])
                tp, man, wdir = self.gather_once(d, d, cd, data, stage_file, "lc%s%d" % (cond, i))
                copy_cpu = cpu_s(d["pid"]) - a
                self.check_manifest(man, nfiles, total)
                shutil.rmtree(wdir)
                if i:
                    for k, v in (("node", t), ("raw", tr), ("node_cpu", node_cpu),
                                 ("raw_cpu", raw_cpu), ("copy", tp), ("cp", tc),
                                 ("copy_cpu", copy_cpu), ("cp_cpu", cp_cpu)):
                        r[k].append(v)
            for h in hogs:
                self.procs.stop(h)
            res[cond] = r
            log("gatherload %s: %s" % (cond, json.dumps(r)))
        for p, dd in ((cn, n), (cd, d)):
            self.procs.stop(p)
            self.stop_daemon(dd)
        self.stop_daemon(c)
        self.raw["gatherload"] = res
        tree = "%d x 16 KiB + 2 x %d MiB" % (small_n, large_mib)
        for cond, how in (("idle", "idle machine"),
                          ("loaded", "%d CPU-bound processes beside" % (os.cpu_count() or 2))):
            r = res[cond]
            med = statistics.median
            nr = [a / b for a, b in zip(r["raw"], r["node"])]
            cpu_n, cpu_r = med(r["node_cpu"]) / gib, med(r["raw_cpu"]) / gib
            self.row("gl.node_%s" % cond, g, "across nodes / raw TCP stream, %s" % how, "x", nr,
                     target=">= 0.9x raw stream",
                     status="PASS" if med(nr) >= 0.9 else "MISS",
                     note="%s; profd %.2f s, tar|socat %.2f s; CPU-s/GiB: profd %.2f (node + "
                          "coordinator), tar|socat %.2f (%.2fx)" % (
                              tree, med(r["node"]), med(r["raw"]), cpu_n, cpu_r,
                              cpu_n / max(cpu_r, 1e-9)),
                     reason=self.turn_cause("gather_node"))
            # judged on the figure the row shows: the median of the per-run ratios
            ncr = [a / max(b, 1e-9) for a, b in zip(r["node_cpu"], r["raw_cpu"])]
            self.row("gl.node_cpu_%s" % cond, g, "across nodes, CPU-s per GiB: profd / tar|socat, "
                     "%s" % how, "x", ncr,
                     target="<= 1.2x", status="PASS" if med(ncr) <= 1.2 else "MISS",
                     note="profd %.2f, tar|socat %.2f CPU-s/GiB" % (cpu_n, cpu_r),
                     reason=self.turn_cause("gather_node_cpu"))
            cr = [a / b for a, b in zip(r["cp"], r["copy"])]
            cpu_c, cpu_cp = med(r["copy_cpu"]) / gib, med(r["cp_cpu"]) / gib
            self.row("gl.copy_%s" % cond, g, "other FS (disk -> tmpfs) / cp -r, %s" % how, "x",
                     cr, target=">= 0.95x cp -r",
                     status="PASS" if med(cr) >= 0.95 else "MISS",
                     note="%s; profd %.2f s, cp -r %.2f s; xxh64 on" % (
                         tree, med(r["copy"]), med(r["cp"])),
                     reason=self.turn_cause("gather_copy"))
            ccr = [a / max(b, 1e-9) for a, b in zip(r["copy_cpu"], r["cp_cpu"])]
            self.row("gl.copy_cpu_%s" % cond, g, "other FS, CPU-s per GiB: profd / cp -r, %s" %
                     how, "x", ccr,
                     target="<= 1.2x", status="PASS" if med(ccr) <= 1.2 else "MISS",
                     note="profd %.2f, cp -r %.2f CPU-s/GiB" % (cpu_c, cpu_cp),
                     reason=self.turn_cause("gather_copy_cpu"))

    # ---------------------------------------------------------- output

    def run(self):
        only = self.args.only.split(",") if self.args.only else DEFAULT
        for f in only:
            if f not in FIGURES:
                raise SystemExit("bench: unknown figure %s (%s)" % (f, " ".join(FIGURES)))
        for f in FIGURES:
            if f not in only:
                continue
            t0 = time.monotonic()
            log("%s ..." % f)
            try:
                getattr(self, "fig_" + f)()
            except Exception as e:  # report it; go on with the next figure
                self.not_run(f, e)
                for p in list(self.procs.procs):
                    self.procs.stop(p)
            log("%s: %.0f s" % (f, time.monotonic() - t0))


# ---------------------------------------------------------------- measures


def state_saves(url):
    """A coordinator's state-save counters from its /metrics."""
    import urllib.request
    out = {"saves": 0.0, "seconds": 0.0, "encoded": 0.0, "unchanged": 0.0}
    names = {"profd_state_saves_total": "saves", "profd_state_save_seconds_total": "seconds",
             'profd_state_members_total{how="encoded"}': "encoded",
             'profd_state_members_total{how="unchanged"}': "unchanged"}
    with urllib.request.urlopen(url + "/metrics", timeout=60) as f:
        for line in f.read().decode().splitlines():
            k, _, v = line.rpartition(" ")
            if k in names:
                out[names[k]] = float(v)
    return out


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    """utime + stime of a process (all its threads), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    return proc_status(pid, "VmRSS")


def hwm_kib(pid):
    return proc_status(pid, "VmHWM")


def ctx_switches(pid):
    n = 0
    for st in glob.glob("/proc/%d/task/*/status" % pid):
        try:
            with open(st) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except OSError:
            pass  # a thread that just ended
    return n


def ctx_switches_split(pid, name):
    """Context switches of the threads of `pid` not named `name`, and of
    those named `name` (the thread's comm)."""
    other = named = 0
    for task in glob.glob("/proc/%d/task/*" % pid):
        try:
            with open(task + "/comm") as f:
                comm = f.read().strip()
            n = 0
            with open(task + "/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches",
                                        "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except OSError:
            continue  # a thread that just ended
        if comm == name:
            named += n
        else:
            other += n
    return other, named


def sample(pid, peer, n, dt):
    """n intervals of dt seconds: wakeups/s and CPU (cores) of `pid`, its
    RSS at the end of each, and the wakeups/s of `peer` (if any)."""
    out = {"wakeups": [], "cpu": [], "rss_kib": [], "peer_wakeups": []}
    for _ in range(n):
        a, c0, p0, t0 = ctx_switches(pid), cpu_s(pid), peer and ctx_switches(peer), time.monotonic()
        time.sleep(dt)
        t = time.monotonic() - t0
        out["wakeups"].append((ctx_switches(pid) - a) / t)
        out["cpu"].append((cpu_s(pid) - c0) / t)
        out["rss_kib"].append(rss_kib(pid))
        if peer:
            out["peer_wakeups"].append((ctx_switches(peer) - p0) / t)
    return out


def wakeups_per_s(pid, seconds):
    a = ctx_switches(pid)
    t0 = time.monotonic()
    time.sleep(seconds)
    b = ctx_switches(pid)
    return (b - a) / (time.monotonic() - t0)


def fs_type(path):
    r = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", path], capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout.strip():
        r = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return r.stdout.strip() or "?"


def warm(tree):
    """Read every file of `tree` once (into the page cache)."""
    buf = bytearray(1 << 20)
    for root, _, files in os.walk(tree):
        for name in files:
            with open(os.path.join(root, name), "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


def tree_inode(tree):
    """The inode of the tree's large file (else its first small one): the
    same after a gather means a rename, not a copy."""
    for f in ("device-0.bin", "rank00/trace-0000.json"):
        if os.path.exists(os.path.join(tree, f)):
            return os.stat(os.path.join(tree, f)).st_ino
    return None


def read_line(pipe, timeout):
    import select

    deadline = time.monotonic() + timeout
    buf = b""
    fd = pipe.fileno()
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
        if not r:
            break
        c = os.read(fd, 1)
        if not c:
            break
        if c == b"\n":
            return buf.decode()
        buf += c
    return None


def listening(port):
    """Whether a TCP socket listens on the port (from /proc/net/tcp)."""
    want = ":%04X" % port
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if parts[1].endswith(want) and parts[3] == "0A":
                    return True
    except OSError:
        pass
    return False


def raw_stream(src, dst, port):
    """Seconds to move the tree `src` to `dst` as tar over one TCP stream."""
    if shutil.which("socat") is None:
        raise RuntimeError("socat not found (deploy/deps.sh installs it)")
    os.makedirs(dst)
    rx = subprocess.Popen("socat -u TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr - | tar -C %s -xf -"
                          % (port, dst), shell=True)
    deadline = time.monotonic() + 10
    while not listening(port):
        if time.monotonic() > deadline:
            rx.kill()
            raise RuntimeError("the raw-stream receiver did not listen")
        time.sleep(0.01)
    t0 = time.monotonic()
    tx = subprocess.run("tar -C %s -cf - . | socat -u - TCP:127.0.0.1:%d" % (src, port),
                        shell=True)
    rx.wait(600)
    t = time.monotonic() - t0
    if tx.returncode != 0 or rx.returncode != 0:
        raise RuntimeError("raw stream failed")
    return t


# ---------------------------------------------------------------- machine


def machine():
    def first(path, key):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(key):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "?"

    def run(*a):
        try:
            return subprocess.run(a, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "?"

    os_name = "?"
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    mem = first("/proc/meminfo", "MemTotal")
    try:
        mem = "%.1f GiB" % (int(mem.split()[0]) / 2**20)
    except ValueError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": first("/proc/cpuinfo", "model name"),
        "memory": mem,
        "kernel": platform.release(),
        "os": os_name,
        "clocksource": run("cat", "/sys/devices/system/clocksource/clocksource0/"
                                  "current_clocksource"),
        "compiler": run("cc", "--version").splitlines()[0] if run("cc", "--version") else "?",
        "nng": run("dpkg-query", "-W", "-f=${Version}", "libnng1") or "?",
        "python": run(PY, "-c", "import sys; print(sys.version.split()[0])"),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }


def git_rev():
    r = subprocess.run(["git", "-C", SOURCE, "describe", "--always", "--dirty"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


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


def print_table(rows, out):
    w = max(len(r["name"]) for r in rows)
    out.write("%-*s %14s %10s %22s %-8s %-24s %s\n" % (w, "figure", "median", "p99", "spread",
                                                       "unit", "target", "status"))
    group = None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            out.write("\n%s\n" % group)
        med = fmt_val(r["summary"]["median"], r["unit"], r["fmt"]) if r["summary"] else "-"
        sp, how = spread(r)
        out.write("%-*s %14s %10s %22s %-8s %-24s %s\n" % (
            w, r["name"], med, p99_of(r), ("%s (%s)" % (sp, how.split(",")[0])) if sp else how,
            r["unit"], r["target"] or "",
            r["status"] if r["target"] or r["status"] == "NOT RUN" else ""))
    out.write("\n")


def write_json(path, b, meta):
    rows = [{k: v for k, v in r.items() if k != "fmt"} for r in b.rows]
    with open(path, "w") as f:
        json.dump({"meta": meta, "figures": rows, "raw": b.raw}, f, indent=1)
        f.write("\n")


def md_escape(s):
    return s.replace("|", "\\|")


def write_md(path, b, meta):
    m = meta["machine"]
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
    L.append("| load average at start / end | %s / %s |" % (
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
             "not enforced: MISS rows say what is known of the cause.")
    L.append("")
    L.append("## Against DESIGN.md section 6")
    L.append("")
    L.append("| target | figure | median | p99 | spread | status | reason known so far |")
    L.append("|---|---|---|---|---|---|---|")
    for r in b.rows:
        if not r["target"] and r["status"] != "NOT RUN":
            continue
        med = fmt_val(r["summary"]["median"], r["unit"], r["fmt"]) if r["summary"] else "-"
        sp, how = spread(r)
        p99 = p99_of(r)
        L.append("| %s | %s | %s %s | %s | %s | **%s** | %s |" % (
            md_escape(r["target"] or ""), md_escape(r["name"]), med, r["unit"],
            ("%s %s" % (p99, r["unit"])) if p99 else "",
            md_escape(("%s (%s)" % (sp, how)) if sp else how), r["status"],
            md_escape(r["reason"] or r["note"] if r["status"] in ("MISS", "NOT RUN") else "")))
    L.append("")
    L.append("## Every figure")
    L.append("")
    L.append("| figure | median | p99 | spread | note |")
    L.append("|---|---|---|---|---|")
    group = None
    for r in b.rows:
        if r["group"] != group:
            group = r["group"]
            L.append("| **%s** | | | | |" % md_escape(group))
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


def main():
    ap = argparse.ArgumentParser(description="profd benchmarks")
    ap.add_argument("--build", required=True, help="the CMake build folder")
    ap.add_argument("--quick", action="store_true", help="smoke-test sizes")
    ap.add_argument("--only", help="comma-separated figures: " + ",".join(FIGURES) +
                    " (default: all; scale at 4,096 ranks, 16,384 when named)")
    ap.add_argument("--no-results-md", action="store_true",
                    help="do not rewrite tests/bench/RESULTS.md")
    args = ap.parse_args()
    t0 = time.monotonic()
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "commit": git_rev(),
            "machine": machine(), "quick": args.quick}
    b = Bench(args)

    def on_signal(sig, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        b.run()
    except KeyboardInterrupt:
        b.cleanup()
        raise SystemExit("bench: interrupted")
    finally:
        b.cleanup()
    meta["wall_s"] = time.monotonic() - t0
    try:  # deploy/bench.sh's start: with its package check and the build
        meta["total_s"] = time.time() - float(os.environ["PROFD_BENCH_T0"])
    except (KeyError, ValueError):
        meta["total_s"] = None
    meta["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    print_table(b.rows, sys.stdout)
    out = os.path.join(b.build, "bench-results.json")
    write_json(out, b, meta)
    log("wrote %s" % out)
    if not args.no_results_md and not args.only and not args.quick:
        md = os.path.join(HERE, "RESULTS.md")
        write_md(md, b, meta)
        log("wrote %s" % md)
    log("wall time %.0f s" % meta["wall_s"])
    for fig, err in b.failures:
        log("could not run %s: %s" % (fig, err))
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
