# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""What every benchmark of tests/bench/run.py uses: paths, logging,
statistics, the processes a run starts, and readings of /proc, the
machine and the network."""

import glob
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time



HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


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


LOWER = ("<=", "<")   # lower is better
HIGHER = (">=", ">")  # higher is better


def judged_stat(vals, op):
    """The value a target is judged on, and its name: the one that 90 % of
    the runs meet, not the median. Higher-is-better (op >= or >): the p10
    (nearest rank) for n >= 10, else the min; lower-is-better (<= or <):
    the p90, else the max (the p10 of the runs ranked from best to worst).
    None, "no value" when there is none."""
    if op not in LOWER + HIGHER:
        raise ValueError("judge: unknown comparison %r" % (op,))
    v = sorted(vals)
    if not v:
        return None, "no value"
    if op in HIGHER:
        return (pct(v, 10), "p10") if len(v) >= 10 else (v[0], "min")
    return (pct(v, 90), "p90") if len(v) >= 10 else (v[-1], "max")


def meets(value, op, limit):
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit,
            ">": value > limit}[op]


def judge(vals, op, limit):
    """PASS or MISS of the target `op limit` (e.g. ">=", 0.9) over the runs'
    values, and what judged it ("min, n=5", "p10, n=30"; see judged_stat)."""
    value, name = judged_stat(vals, op)
    if value is None:
        return "MISS", name
    return ("PASS" if meets(value, op, limit) else "MISS"), "%s, n=%d" % (name, len(vals))


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


def state_saves(url):
    """A coordinator's state-save counters from its /metrics."""
    import urllib.request
    out = {"saves": 0.0, "seconds": 0.0, "encoded": 0.0, "unchanged": 0.0, "deferred": 0.0}
    names = {"profd_state_saves_total": "saves", "profd_state_save_seconds_total": "seconds",
             'profd_state_members_total{how="encoded"}': "encoded",
             'profd_state_members_total{how="unchanged"}': "unchanged",
             "profd_chunks_deferred_total": "deferred"}
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


def thread_cpu_s(pid):
    """A process's utime + stime split by thread: its main thread (a
    daemon's event loop), nng's threads (named nng:...) and the rest
    (libuv's thread pool), in seconds. A thread that ended is not counted."""
    out = {"loop": 0.0, "nng": 0.0, "other": 0.0}
    tick = os.sysconf("SC_CLK_TCK")
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/stat" % (base, tid)) as f:
                head, _, rest = f.read().rpartition(")")
        except OSError:
            continue  # it ended meanwhile
        fields = rest.split()
        comm = head.partition("(")[2]
        s = (int(fields[11]) + int(fields[12])) / tick
        key = "loop" if int(tid) == pid else "nng" if comm.startswith("nng") else "other"
        out[key] += s
    return out


def machine_busy_s():
    """CPU-seconds the machine's cores spent not idle (/proc/stat, all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: busy = all but idle, iowait
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


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


def remove_window(wdir):
    """A gathered window's folder removed: its steps.json and report.html
    are written after its manifest and may still arrive meanwhile."""
    for _ in range(20):
        try:
            shutil.rmtree(wdir)
            return
        except OSError:  # a .part renamed away under us, or a file just arrived: again
            time.sleep(0.05)
    shutil.rmtree(wdir, ignore_errors=True)


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
    """The commit, "-dirty" when a tracked file differs from it, but for
    tests/bench/RESULTS.md: the file a full run writes, so that a second
    run in the same clone does not call its own commit dirty."""
    r = subprocess.run(["git", "-C", SOURCE, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    rev = r.stdout.strip()
    if not rev:
        return "?"
    d = subprocess.run(["git", "-C", SOURCE, "status", "--porcelain", "--untracked-files=no",
                        "--", ".", ":(exclude)tests/bench/RESULTS.md"],
                       capture_output=True, text=True)
    return rev + ("-dirty" if d.returncode == 0 and d.stdout.strip() else "")

