# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The fault-injection soak (deploy/soak.sh runs it): a benchmark, not a test.

A simulated job (profd-sim, 16 ranks, 8 on each of two node daemons, under
a coordinator, all on loopback) runs a loop of on-demand windows
(`profctl start --next 2`) while an injector, one fault at a time:
  - kill -9s a node daemon and starts it again (its journal);
  - kill -9s the coordinator and starts it again (its state file);
  - SIGSTOPs a daemon for 15 s (a node daemon or the coordinator);
  - kill -9s a worker (one rank's process) and starts it again;
  - fills the file system of every save_path and spool (a tmpfs of its
    own: root) and frees it 10 s later;
  - sends malformed and hostile requests to both sockets of a daemon:
    garbage, a string holding NUL, integers of +-9.2e18, a request 5 times
    the size limit, an unknown type, another process registering as a
    worker, steps for a client of another process, and four 50 MB
    requests at once (streamed: cut before they are read);
  - puts a sparse file (100 GiB apparent, no block) into a gathered capture
    folder, for retention's next pass (retention on: half the file
    system), and removes it 5 s later;
  - kill -9s a node daemon, appends a forged `done` window to its journal
    naming a folder outside its save_path (a canary file in it), starts it
    again and checks 5 s later that the canary is still there.
Then the faults stop, every daemon runs, and the windows are given time to
finish. Reported: windows requested / done / marked (cancelled, failed);
captures complete / failed / missed / truncated with their reasons;
captures lost (requested, yet in no manifest: must be 0); tree entries
without a complete capture (files that no manifest lists, .part files,
window folders without a manifest: must be 0); the training thread's
longest profd call; each daemon's RSS at start and end.

Usage: soak.py BUILD_DIR [--minutes M] [--quick] [--seed S] [--out FILE.md]
       [--json FILE]
"""
import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
NNGREQ = os.path.join(SRC, "tests", "system", "nngreq.py")
RAWSP = os.path.join(SRC, "tests", "security", "rawsp.py")


def now():
    return time.monotonic()


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Daemon:
    def __init__(self, soak, name, args, run_dir):
        self.soak, self.name, self.args, self.run_dir = soak, name, args, run_dir
        self.proc = None
        self.starts = 0
        self.stopped = False  # SIGSTOPped
        self.rss_start = None
        self.log = open(os.path.join(soak.tmp, f"{name}.log"), "ab")

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=self.log)
        self.starts += 1
        self.stopped = False
        sock = os.path.join(self.run_dir, "control.sock")
        for _ in range(200):
            if self.proc.poll() is not None:
                raise SystemExit(f"soak: {self.name} exited: see {self.log.name}")
            if os.path.exists(sock) and self.soak.ctl(self, "status", check=False)[0] == 0:
                return
            time.sleep(0.05)
        raise SystemExit(f"soak: {self.name} did not start")

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def url(self):
        return f"ipc://{self.run_dir}/control.sock"

    def worker_url(self):
        return f"ipc://{self.run_dir}/worker.sock"


class Soak:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.profd = os.path.join(self.build, "daemon", "profd")
        self.profctl = os.path.join(self.build, "client", "profctl")
        self.sim = os.path.join(self.build, "client", "profd-sim")
        self.tmp = tempfile.mkdtemp(prefix="profd-soak-")
        self.rng = random.Random(a.seed)
        self.fs = None
        self.events = []  # (t, what)
        self.requested = {}  # window id -> started window (from the reply)
        self.start_failures = collections.Counter()
        self.faults = collections.Counter()
        self.hostile = collections.Counter()
        self.lock = threading.Lock()
        self.sims = {}  # rank -> Popen
        self.killed_ranks = 0
        self.t0 = now()
        self.fill_path = None

    # ---- helpers ----
    def event(self, what):
        with self.lock:
            self.events.append((round(now() - self.t0, 1), what))
        log(what)

    def ctl(self, d, *args, check=True, timeout=20):
        try:
            p = subprocess.run([self.profctl, "--url", d.url(), *args], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return 124, "", "timeout"
        if check and p.returncode not in (0, 3):
            raise RuntimeError(f"profctl {' '.join(args)}: {p.returncode} {p.stderr.strip()}")
        return p.returncode, p.stdout, p.stderr

    def setup(self):
        if os.geteuid() == 0:
            self.fs = os.path.join(self.tmp, "fs")
            os.makedirs(self.fs)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=768m", "tmpfs", self.fs],
                           check=True)
            base = self.fs
        else:
            base = os.path.join(self.tmp, "data")
            os.makedirs(base)
            log("not root: no tmpfs of its own, the full-disk fault is left out")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        conf = os.path.join(self.tmp, "soak.yaml")
        with open(conf, "w") as f:
            # the defaults, but a smaller message limit (hostile requests
            # 5 times it are cheap), a client timeout well below the stall,
            # a free-disk floor for a 768 MiB file system (the 1 GiB default
            # refuses every start there) and no retention (a pruned window's
            # captures would read as lost: every manifest is counted)
            # retention by size stays on (half the file system, far above
            # what the windows hold) so that the sparse file has a pass to
            # fool
            f.write("limits:\n  max_msg_bytes: 256KiB\n  client_timeout_ms: 10000\n"
                    "  min_free_bytes: 16MiB\n"
                    "retention:\n  max_fraction: 0.5\n  max_age_hours: 0\n"
                    "coordinator:\n  node_timeout_ms: 20000\n")
        self.coord = Daemon(self, "coordinator",
                            [self.profd, "--config", conf, "--coordinator-listen",
                             f"tcp://127.0.0.1:{port}", "--insecure-tcp-links", "--node",
                             "coordinator", "--run-dir", os.path.join(self.tmp, "c", "run"),
                             "--save-path", os.path.join(base, "coord")],
                            os.path.join(self.tmp, "c", "run"))
        self.nodes = []
        for i in (1, 2):
            self.nodes.append(Daemon(self, f"node{i}",
                                     [self.profd, "--config", conf, "--coordinator-url",
                                      f"tcp://127.0.0.1:{port}", "--insecure-tcp-links", "--node",
                                      f"node{i}", "--run-dir",
                                      os.path.join(self.tmp, f"n{i}", "run"), "--save-path",
                                      os.path.join(base, f"node{i}")],
                                     os.path.join(self.tmp, f"n{i}", "run")))
        self.coord.start()
        for n in self.nodes:
            n.start()
        for r in range(16):
            self.start_rank(r)
        deadline = now() + 60
        while now() < deadline:
            st = self.status()
            if st and sum(1 for r in st["ranks"] if r["step_ms"] > 0 and r["state"] != "lost") == 16:
                break
            time.sleep(0.2)
        else:
            raise SystemExit("soak: 16 ranks did not register")
        time.sleep(2)
        for d in [self.coord] + self.nodes:
            d.rss_start = rss_kib(d.proc.pid)
        self.event("16 ranks registered on 2 node daemons")

    def start_rank(self, r, step=1):
        """A rank's worker; one started again resumes at the job's step, as a
        restarted job would (torchrun, a checkpoint), not at step 1."""
        node = self.nodes[r // 8]
        env = dict(os.environ, PROFD_RUN_DIR=node.run_dir)
        out = open(os.path.join(self.tmp, f"sim{r}.log"), "ab")
        self.sims[r] = subprocess.Popen(
            [self.sim, "--layout", "actor:1", "--rank-offset", str(r), "--steps", "10000000",
             "--start-step", str(step), "--rate", "10", "--trace-bytes", "65536", "--host",
             f"host{r // 8 + 1}", "--job", "soak", "--report"], env=env, stdout=out, stderr=out)

    def status(self):
        rc, out, _ = self.ctl(self.coord, "--json", "status", check=False, timeout=5)
        if rc != 0:
            return None
        try:
            return json.loads(out)
        except ValueError:
            return None

    # ---- the window loop ----
    def windows_loop(self, until):
        while now() < until:
            rc, out, err = self.ctl(self.coord, "--json", "start", "--next", "2", "--tool", "sim",
                                    "--job", "soak", check=False, timeout=10)
            if rc == 0:
                try:
                    for w in json.loads(out)["windows"]:
                        with self.lock:
                            self.requested[w["id"]] = w
                except (ValueError, KeyError):
                    self.start_failures["unreadable reply"] += 1
            else:
                why = (err.strip().splitlines() or ["?"])[-1]
                why = re.sub(r"[0-9]+", "N", why)[:120]
                self.start_failures[why] += 1
            time.sleep(3)

    # ---- faults ----
    def fault_kill_node(self):
        n = self.rng.choice(self.nodes)
        n.kill9()
        self.event(f"kill -9 {n.name}")
        time.sleep(self.rng.uniform(0.5, 3))
        n.start()
        self.event(f"{n.name} started again")

    def fault_kill_coordinator(self):
        self.coord.kill9()
        self.event("kill -9 coordinator")
        time.sleep(self.rng.uniform(0.5, 3))
        self.coord.start()
        self.event("coordinator started again")

    def fault_stall(self):
        d = self.rng.choice(self.nodes + [self.coord])
        d.proc.send_signal(signal.SIGSTOP)
        d.stopped = True
        self.event(f"SIGSTOP {d.name} for 15 s")
        time.sleep(15)
        d.proc.send_signal(signal.SIGCONT)
        d.stopped = False
        self.event(f"SIGCONT {d.name}")

    def fault_kill_worker(self):
        r = self.rng.randrange(16)
        p = self.sims.get(r)
        if p and p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()
            self.killed_ranks += 1
        self.event(f"kill -9 the worker of rank {r}")
        time.sleep(self.rng.uniform(1, 4))
        st = self.status()
        step = max((x["step"] or 0 for x in st["ranks"]), default=0) + 1 if st else 1
        self.start_rank(r, step)
        self.event(f"rank {r} started again at step {step}")

    def fault_fill(self):
        if self.fs is None:
            return
        self.fill_path = os.path.join(self.fs, "filler")
        subprocess.run(["dd", "if=/dev/zero", f"of={self.fill_path}", "bs=1M"],
                       capture_output=True)
        self.event("save_path file system full")
        time.sleep(10)
        os.unlink(self.fill_path)
        self.fill_path = None
        self.event("save_path file system freed")

    def hostile_requests(self, d):
        big = os.path.join(self.tmp, "big.json")
        if not os.path.exists(big):
            with open(big, "w") as f:
                f.write('{"v":1,"type":"status"}' + " " * (5 * 256 * 1024))
        client = "4294967297"
        reqs = [
            ("garbage", "not json at all"),
            ("NUL in a string", '{"v":1,"type":"hello","job":"a\\u0000b","role":"x","rank":0,'
                                '"host":"h","pid":1}'),
            ("step 9.2e18", '{"v":1,"type":"events","client":%s,"ev":[1,9200000000000000000,1]}'
             % client),
            ("step -9.2e18", '{"v":1,"type":"events","client":%s,"ev":[1,-9200000000000000000,1]}'
             % client),
            ("unknown type", '{"v":1,"type":"reboot"}'),
            ("5x the size limit", "@" + big),
            ("a worker of another process", None),
            ("start with next 9.2e18", '{"v":1,"type":"start","next":9200000000000000000}'),
        ]
        st = self.status()
        victim = None
        if st:
            ranks = [r for r in st["ranks"] if r["state"] != "lost"]
            if ranks:
                victim = self.rng.choice(ranks)
        for what, req in reqs:
            url = d.worker_url()
            if what == "start with next 9.2e18":
                url = self.coord.url()
            if what == "a worker of another process":
                if victim is None:
                    continue
                req = ('{"v":1,"type":"hello","job":"%s","role":"%s","rank":%d,"host":"%s",'
                       '"pid":%d}' % (victim["job"], victim["role"], victim["rank"],
                                      victim["host"], victim["pid"]))
                url = self.nodes[0 if victim["host"] == "host1" else 1].worker_url()
            try:
                p = subprocess.run([sys.executable, NNGREQ, url, req], capture_output=True,
                                   text=True, timeout=15)
                out = p.stdout.strip()
            except subprocess.TimeoutExpired:
                out = "<timeout>"
            m = re.search(r'"name":"([A-Z]+)"', out)
            self.hostile[f"{what}: {m.group(1) if m else out[:40] or 'no reply'}"] += 1

    def capture_dirs(self):
        """Gathered capture folders (with a file) of finished windows in the
        node daemons' and the coordinator's trees."""
        out = []
        for d in [self.coord] + self.nodes:
            root = d.args[d.args.index("--save-path") + 1]
            for dirpath, _, files in os.walk(root):
                if ".spool" in dirpath or "tensorboard" in dirpath:
                    continue
                if any(f.endswith(".pt.trace.json") for f in files):
                    out.append(dirpath)
        return out

    def fault_sparse(self):
        dirs = self.capture_dirs()
        if not dirs:
            self.event("sparse file: no gathered capture yet")
            return
        path = os.path.join(self.rng.choice(dirs), "sparse.bin")
        with open(path, "wb") as f:
            f.truncate(100 << 30)
        self.event(f"sparse file of 100 GiB in {os.path.dirname(path)}")
        # a window finishing runs a pass; one runs a second after a restart too
        time.sleep(5)
        os.unlink(path)
        self.hostile["sparse file: removed after 5 s"] += 1

    def fault_forged_journal(self):
        n = self.rng.choice(self.nodes)
        save = n.args[n.args.index("--save-path") + 1]
        journal = os.path.join(save, f".profd-{n.name}.journal")
        n.kill9()
        self.event(f"kill -9 {n.name} (a forged journal record)")
        rec = None
        try:
            for line in open(journal, encoding="utf-8", errors="replace"):
                if line.startswith('{"kind":"window"'):
                    rec = line
        except OSError:
            pass
        canary = None
        if rec:
            w = json.loads(rec)
            win = w["window"]
            # a folder outside save_path whose root is as long as save_path
            decoy = save[:-1] + ("X" if save[-1] != "X" else "Y")
            forged = os.path.join(decoy, win["job"], win["name"])
            os.makedirs(forged, exist_ok=True)
            canary = os.path.join(forged, "canary")
            with open(canary, "w") as f:
                f.write("keep\n")
            old = time.time() - 90 * 86400
            os.utime(canary, (old, old))
            win.update(id=900000 + self.faults["forged_journal"], state="done",
                       dir=forged, root_len=len(decoy), mirror=False, forwarded=True)
            win["pruned"] = None
            win["members"] = []
            win["incoming"] = []
            win.pop("remote_id", None)
            with open(journal, "a") as f:
                f.write(json.dumps(w, separators=(",", ":")) + "\n")
        time.sleep(self.rng.uniform(0.5, 2))
        n.start()
        self.event(f"{n.name} started again on a forged journal")
        if canary:
            time.sleep(5)
            kept = os.path.exists(canary)
            self.hostile[f"forged journal record outside save_path: "
                         f"{'canary kept' if kept else 'CANARY DELETED'}"] += 1

    def big_requests(self, d):
        p = subprocess.run([sys.executable, RAWSP, "big", d.worker_url(), str(50_000_000), "4"],
                           capture_output=True, text=True, timeout=120)
        cut = p.stdout.strip() or p.stderr.strip()[:40]
        self.hostile[f"4 requests of 50 MB at once: {cut} of 4 cut"] += 1

    def fault_hostile(self):
        d = self.rng.choice(self.nodes)
        self.hostile_requests(d)
        self.big_requests(d)
        self.event(f"hostile requests to {d.name}")

    def injector(self, until):
        faults = [self.fault_kill_node, self.fault_hostile, self.fault_sparse,
                  self.fault_forged_journal, self.fault_kill_worker,
                  self.fault_kill_coordinator, self.fault_fill, self.fault_stall,
                  self.fault_hostile, self.fault_kill_node]
        i = 0
        time.sleep(5)
        while now() < until:
            f = faults[i % len(faults)]
            i += 1
            self.faults[f.__name__[6:]] += 1
            try:
                f()
            except Exception as e:  # a fault that could not be made is said, not fatal
                self.event(f"{f.__name__}: {e}")
            time.sleep(self.rng.uniform(4, 8))

    # ---- the end ----
    def drain(self, seconds):
        for d in [self.coord] + self.nodes:
            if d.stopped:
                d.proc.send_signal(signal.SIGCONT)
                d.stopped = False
            if d.proc.poll() is not None:
                d.start()
        if self.fill_path and os.path.exists(self.fill_path):
            os.unlink(self.fill_path)
        deadline = now() + seconds
        while now() < deadline:
            pending = 0
            for wid in list(self.requested):
                rc, out, _ = self.ctl(self.coord, "--json", "windows", str(wid), check=False,
                                      timeout=5)
                if rc == 0:
                    w = json.loads(out)["windows"][0]
                    pending += w["state"] not in ("done", "cancelled", "failed")
            if pending == 0:
                return
            time.sleep(2)
        log(f"{pending} window(s) still unfinished after the drain")

    def stop_sims(self):
        for p in self.sims.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.sims.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()

    def analyse(self):
        r = {"windows": collections.Counter(), "captures": collections.Counter(),
             "reasons": collections.Counter(), "lost": 0, "lost_detail": [],
             "incomplete_tree": 0, "tree_detail": [], "noncomplete_with_files": 0}
        save = None
        for wid, w0 in sorted(self.requested.items()):
            rc, out, _ = self.ctl(self.coord, "--json", "windows", str(wid), check=False)
            if rc == 0:
                w = json.loads(out)["windows"][0]
                r["windows"][w["state"]] += 1
            else:
                # a restarted coordinator keeps its unfinished windows only: a
                # finished one is known by its manifest
                man = os.path.join(w0["path"], "manifest.json") if w0.get("path") else ""
                if not os.path.isfile(man):
                    r["windows"]["unknown to the coordinator, no manifest"] += 1
                    r["lost"] += w0.get("selected", 0)
                    r["lost_detail"].append(f"window {wid}: unknown at the end, no manifest")
                    continue
                w = dict(w0, state="done", ranks=None)
                r["windows"]["done (forgotten by a restarted coordinator, manifest read)"] += 1
            if w["state"] != "done":
                if w["state"] in ("cancelled", "failed"):
                    why = re.sub("[0-9]+", "N", w.get("reason") or "")
                    r["reasons"][f"window {w['state']}: {why}"] += 1
                    continue
                r["lost"] += w["selected"]
                waiting = [f"rank {x['rank']} on {x['host']}" for x in w.get("ranks") or []
                           if x["state"] == "expected"]
                r["lost_detail"].append(f"window {wid} {w['state']}: {w.get('reason')}; "
                                        f"waiting for {', '.join(waiting) or 'its files'}")
                continue
            man = os.path.join(w["path"], "manifest.json")
            save = os.path.dirname(os.path.dirname(w["path"]))
            try:
                m = json.load(open(man))
            except (OSError, ValueError) as e:
                r["lost"] += w["selected"]
                r["lost_detail"].append(f"window {wid} done without its manifest: {e}")
                continue
            got = collections.Counter()
            for c in m["captures"]:
                got[(c["rank"], c["host"])] += 1
                r["captures"][c["status"]] += 1
                if c["status"] != "complete":
                    reason = re.sub(r"[0-9]+", "N", c.get("reason") or "")
                    reason = re.sub(r"'[^']*'", "'...'", reason)
                    reason = re.sub(r"/tmp/[^ ]*", "PATH", reason)
                    r["reasons"][f"{c['status']}: {reason[:110]}"] += 1
                    if c.get("files"):
                        r["noncomplete_with_files"] += 1
            if w.get("ranks") is None:  # only the count of the start reply is known
                if len(got) < w.get("selected", 0):
                    r["lost"] += w["selected"] - len(got)
                    r["lost_detail"].append(f"window {wid}: {len(got)} ranks in the manifest, "
                                            f"{w['selected']} selected")
                continue
            for rk in w["ranks"]:
                if got[(rk["rank"], rk["host"])] == 0:
                    r["lost"] += 1
                    r["lost_detail"].append(f"window {wid}: rank {rk['rank']} on {rk['host']} "
                                            f"is in no manifest")
        if save is None:
            st = self.status()
            save = os.path.join(st["save_path"], "soak") if st else None
        else:
            save = os.path.join(save, "soak")
        if save and os.path.isdir(save):
            self.scan_tree(save, r)
        return r

    def scan_tree(self, root, r):
        for wdir in sorted(os.listdir(root)):
            wpath = os.path.join(root, wdir)
            if not os.path.isdir(wpath):
                continue
            man = os.path.join(wpath, "manifest.json")
            listed = set()
            if os.path.isfile(man):
                m = json.load(open(man))
                for c in m["captures"]:
                    for f in c.get("files") or []:
                        listed.add(os.path.normpath(os.path.join(c["dir"], f["path"])))
            else:
                r["incomplete_tree"] += 1
                r["tree_detail"].append(f"{wdir}: no manifest.json")
            for d, _, files in os.walk(wpath):
                for f in files:
                    rel = os.path.relpath(os.path.join(d, f), wpath)
                    # the window's own documents, next to its manifest
                    if rel in ("manifest.json", "steps.json", "report.html",
                               "merged.trace.json") or rel.startswith("tensorboard" + os.sep):
                        continue
                    if f.endswith(".part") or rel not in listed:
                        r["incomplete_tree"] += 1
                        r["tree_detail"].append(f"{wdir}/{rel}")

    def report_steps(self):
        longest, own, steps = 0.0, 0.0, 0
        for rk in range(16):
            try:
                text = open(os.path.join(self.tmp, f"sim{rk}.log")).read()
            except OSError:
                continue
            for m in re.finditer(r"(\d+) steps, .*longest profd call ([0-9.]+) us "
                                 r"\(([0-9.]+) us without", text):
                steps += int(m.group(1))
                longest = max(longest, float(m.group(2)))
                own = max(own, float(m.group(3)))
        return longest, own, steps

    def cleanup(self):
        for d in [self.coord] + self.nodes:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)
                d.proc.send_signal(signal.SIGTERM)
                try:
                    d.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    d.proc.kill()
        if self.fs:
            subprocess.run(["umount", "-l", self.fs], capture_output=True)
        if not self.a.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


def write_md(a, s, r, minutes, longest, steps, rss):
    lines = []
    lines.append("# Fault-injection soak (deploy/soak.sh)\n")
    lines.append("A benchmark, not a test. What `deploy/soak.sh%s` measured on %s "
                 "(%s, %d cores), seed %d, %.1f minutes of faults.\n" % (
                     " --quick" if a.quick else "", time.strftime("%Y-%m-%d"),
                     os.uname().machine, os.cpu_count() or 0, a.seed, minutes))
    lines.append("Setup: a coordinator and two node daemons on loopback (plain tcp:// with "
                 "--insecure-tcp-links), 16 ranks of profd-sim (8 a node, one process a rank, "
                 "10 steps/s, 64 KiB traces), `profctl start --next 2 --tool sim` every 3 s; "
                 "save_path and spool of every daemon on one tmpfs of 768 MiB%s.\n" % (
                     "" if s.fs else " (not root: an ordinary folder, no full-disk fault)"))
    lines.append("## Faults injected\n")
    lines.append("| fault | times |\n|---|---|")
    for k, v in sorted(s.faults.items()):
        lines.append(f"| {k.replace('_', ' ')} | {v} |")
    lines.append("")
    lines.append("Hostile requests and the answers they got:\n")
    lines.append("| request: answer | times |\n|---|---|")
    for k, v in sorted(s.hostile.items()):
        lines.append(f"| {k} | {v} |")
    lines.append("")
    lines.append("## Results\n")
    lines.append("| figure | value |\n|---|---|")
    lines.append(f"| windows requested (start accepted) | {len(s.requested)} |")
    for k, v in sorted(r["windows"].items()):
        lines.append(f"| windows {k} | {v} |")
    lines.append(f"| start requests refused or unanswered | {sum(s.start_failures.values())} |")
    for k in ("complete", "failed", "missed", "truncated"):
        lines.append(f"| captures {k} | {r['captures'][k]} |")
    lines.append(f"| **captures lost** (requested, in no manifest; must be 0) | **{r['lost']}** |")
    lines.append(f"| **tree entries without a complete capture** (files no manifest lists, "
                 f".part files, window folders without manifest; must be 0) | "
                 f"**{r['incomplete_tree']}** |")
    lines.append(f"| captures not complete that hold files in the tree (listed, marked) | "
                 f"{r['noncomplete_with_files']} |")
    lines.append(f"| training thread: longest profd call ({steps} steps), with a capture "
                 f"starting or stopping in it (the sim backend writes its trace) | "
                 f"{longest[0]:.1f} us |")
    lines.append(f"| training thread: longest profd call with no backend call in it | "
                 f"{longest[1]:.1f} us |")
    for name, (a0, a1, starts) in rss.items():
        lines.append(f"| {name} RSS at start / end ({starts} start(s)) | "
                     f"{a0 or '-'} KiB / {a1 or '-'} KiB |")
    lines.append("")
    lines.append("Why captures were not complete, and windows marked (numbers as N):\n")
    lines.append("| status: reason | captures |\n|---|---|")
    for k, v in r["reasons"].most_common():
        lines.append(f"| {k.replace('|', '/')} | {v} |")
    lines.append("")
    if s.start_failures:
        lines.append("Start requests that did not make a window (the coordinator was down or "
                     "stopped):\n")
        lines.append("| answer | times |\n|---|---|")
        for k, v in s.start_failures.most_common():
            lines.append(f"| {k.replace('|', '/')} | {v} |")
        lines.append("")
    if r["lost_detail"] or r["tree_detail"]:
        lines.append("Lost captures and incomplete tree entries:\n")
        for x in (r["lost_detail"] + r["tree_detail"])[:40]:
            lines.append(f"- {x}")
        lines.append("")
    lines.append("Timeline:\n")
    lines.append("```")
    for t, what in s.events:
        lines.append(f"{t:7.1f}s {what}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--quick", action="store_true", help="2 minutes")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", default=None, help="write the Markdown report there")
    ap.add_argument("--json", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = ap.parse_args()
    minutes = 2 if a.quick else a.minutes
    s = Soak(a)
    try:
        s.setup()
        until = now() + minutes * 60
        inj = threading.Thread(target=s.injector, args=(until,), daemon=True)
        inj.start()
        s.windows_loop(until)
        inj.join()
        s.event("faults over: every daemon running, the windows given time to finish")
        s.drain(120)
        rss = {d.name: (d.rss_start, rss_kib(d.proc.pid), d.starts) for d in [s.coord] + s.nodes}
        s.stop_sims()
        r = s.analyse()
        longest, own, steps = s.report_steps()
        text = write_md(a, s, r, minutes, (longest, own), steps, rss)
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"result": {k: (dict(v) if isinstance(v, collections.Counter) else v)
                                      for k, v in r.items()},
                           "faults": dict(s.faults), "hostile": dict(s.hostile),
                           "requested": len(s.requested), "longest_call_us": longest,
                           "longest_call_no_backend_us": own,
                           "rss_kib": rss}, f, indent=1)
        ok = r["lost"] == 0 and r["incomplete_tree"] == 0
        log(f"captures lost {r['lost']}, incomplete tree entries {r['incomplete_tree']}: "
            f"{'OK' if ok else 'NOT OK'}")
        return 0 if ok else 1
    finally:
        s.cleanup()
        if a.keep:
            log(f"kept {s.tmp}")


if __name__ == "__main__":
    sys.exit(main())
