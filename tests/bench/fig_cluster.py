# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Figures 8 and 9: window turnaround over 1,024 ranks and the scale run
(a coordinator, node daemons, simulated ranks), for tests/bench/run.py."""

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from benchlib import (cpu_s, hwm_kib, judge, log, machine_busy_s, rss_kib, state_saves,
                      thread_cpu_s)


class ClusterFigures:
    """Mixed into run.Bench: self.daemon, self.ctl, self.row, ..."""

    # ---------------------------------------------------------- 8. turnaround

    def cluster_up(self, tag, nodes, per, rate=10, log_level="warn", nice=10, flush_ms=0,
                   node_args=(), swarm=0, coord_args=()):
        """A coordinator and `nodes` node daemons on loopback TCP, with `per`
        ranks a node: real libprofd clients in one profd-sim --threads
        process per node (a training thread and a client a rank), or, with
        `swarm` N, bench_swarm processes each driving N nodes' ranks from
        one thread. Returns (coordinator, nodes, simulators)."""
        port = self.port()
        # the node daemons' save_path (their spools) on a tmpfs of their own:
        # in a cluster each is another machine's disk. This VM's root ext4
        # has no journal, and an ext4 without one does not reuse an inode
        # deleted in the last 60 s (300 s while its table block is dirty): at
        # each file and folder it creates it reads the table block of every
        # such inode it passes. With the node daemons removing every capture
        # they had sent on the coordinator's disk, that was 40 % of the
        # 4,096-rank coordinator's CPU (perf, 2026-11-28). The coordinator's
        # own save_path: the data folder, or with PROFD_BENCH_SAVE_FS=ext4 an
        # ext4 with a journal (a loop-mounted image)
        ranks = nodes * per
        if os.environ.get("PROFD_BENCH_SAVE_FS") == "ext4":
            save = self.mount_journaled(ranks * 8 * 65536, ranks * 8 * 4 + 65536)
        else:
            save = None, "the data folder's file system"
        self.save_fs = save[1]
        c = self.daemon(tag + "c", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links", *coord_args, log_level=log_level,
                        save_path=os.path.join(save[0] or self.data_root, tag + "c", "out"))
        spools, _ = self.mount_tmpfs(ranks * 16384)
        ns, sims = [], []
        for i in range(nodes):
            name = "%sn%d" % (tag, i)
            ns.append(self.daemon(name, "--coordinator-url",
                                  "tcp://127.0.0.1:%d" % port, "--insecure-tcp-links",
                                  *node_args, log_level=log_level,
                                  save_path=os.path.join(spools, name, "out")))
        logp = os.path.join(self.run_root, "sim.log")
        if swarm:
            for k in range(0, nodes, swarm):
                a = ["nice", "-n", str(nice), self.bin["swarm"], "--per", str(per),
                     "--world", str(nodes * per), "--rate", str(rate), "--substeps", "1",
                     "--trace-bytes", "4096", "--flush-ms", str(flush_ms or 50)]
                for i in range(k, min(nodes, k + swarm)):
                    a += ["--node", "%s,host%d,%d" % (ns[i]["worker"], i, i)]
                sims.append(self.procs.start(a, log_path=logp))
            return c, ns, sims
        # the layout bench_swarm gives its ranks (see its header)
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
            sims.append(self.procs.start(a, log_path=logp))
        return c, ns, sims

    def mount_journaled(self, size_bytes, inodes):
        """An ext4 with a journal (an image file of size_bytes, sparse, with
        `inodes` inodes, loop-mounted: root only) for a coordinator's
        save_path. (path, how), path None where it cannot be made (the
        data folder's file system is used then, and `how` says why)."""
        if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
            return None, "the data folder's file system (a loop mount needs root and mkfs.ext4)"
        path = tempfile.mkdtemp(prefix="profd-bench-ext4-", dir="/tmp")
        self.tmpfs.append(path)
        img = os.path.join(self.data_root, os.path.basename(path) + ".img")
        with open(img, "wb") as f:
            f.truncate(size_bytes + (1536 << 20))  # limits.min_free_bytes is 1 GiB
        # the inode tables and the journal written now, not by the kernel's
        # lazy init thread during the figure
        r = subprocess.run(["mkfs.ext4", "-q", "-F", "-N", str(inodes), "-E",
                            "lazy_itable_init=0,lazy_journal_init=0,nodiscard", img],
                           capture_output=True, text=True)
        if r.returncode == 0:
            r = subprocess.run(["mount", "-o", "loop", img, path], capture_output=True, text=True)
        if r.returncode != 0:
            return None, "the data folder's file system (ext4 image: %s)" % (
                (r.stderr or "failed").strip().splitlines()[-1][:120])
        self.tmpfs_mounted.append(path)
        return path, "ext4 with a journal (loop-mounted image)"

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

    def start_next2(self, c):
        """profctl start --next 2 --tool sim at daemon c: (window id, name)."""
        out = self.ctl(c, "start", "--next", "2", "--tool", "sim").stdout
        m = re.search(r"started window (\d+) (\S+):", out)
        if not m:
            raise RuntimeError("start: " + out)
        return m.group(1), m.group(2)

    def coord_rate(self, c, seconds=3.0):
        """The coordinator's own CPU rate with no window open (its steady
        work: the node daemons' step summaries, heartbeats), in cores."""
        a, t = cpu_s(c["pid"]), time.monotonic()
        time.sleep(seconds)
        return (cpu_s(c["pid"]) - a) / (time.monotonic() - t)

    def one_window(self, c, daemons, ranks, idle_rate, murl=None):
        """profctl start --next 2 at the coordinator; the manifest's arrival
        polled every 2 ms. Returns the window's figures, the coordinator's
        own CPU over it among them (utime+stime of its process only, split
        by thread; its state saves from its /metrics where murl is given)."""
        s0 = state_saves(murl) if murl else None
        k0, p0 = thread_cpu_s(c["pid"]), cpu_s(c["pid"])
        c0 = sum(cpu_s(p) for p in daemons)
        t0 = time.monotonic()
        _, name = self.start_next2(c)
        path = os.path.join(c["save"], "default", name, "manifest.json")
        deadline = t0 + 180
        samples, next_sample = [], 0.0  # (time, coordinator CPU, nodes' CPU, machine busy)
        while not os.path.exists(path):
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError("no manifest for %s after 180 s" % name)
            if now >= next_sample:
                samples.append((now, cpu_s(daemons[0]), sum(cpu_s(p) for p in daemons[1:]),
                                machine_busy_s()))
                next_sample = now + 0.25
            time.sleep(0.002)
        t1 = time.monotonic()
        samples.append((t1, cpu_s(daemons[0]), sum(cpu_s(p) for p in daemons[1:]),
                        machine_busy_s()))
        cpu = sum(cpu_s(p) for p in daemons) - c0
        k1, p1 = thread_cpu_s(c["pid"]), cpu_s(c["pid"])
        # the process's own total (threads that ended included); the pool
        # is what its loop and nng's threads leave of it
        coord = {k: k1[k] - k0[k] for k in ("loop", "nng")}
        coord["total"] = p1 - p0
        coord["other"] = max(0.0, coord["total"] - coord["loop"] - coord["nng"])
        if murl:
            s1 = state_saves(murl)
            coord["saves"] = {k: s1[k] - s0[k] for k in s1}
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
        # where the time from the window's end to the manifest went: the
        # CPU the coordinator, the node daemons and the machine used in it
        tail = [s for s in samples if s[0] >= wend] if wend else []
        busy = None
        if len(tail) >= 2 and tail[-1][0] - tail[0][0] > 0:
            span = tail[-1][0] - tail[0][0]
            busy = {"span_s": span, "coord_cores": (tail[-1][1] - tail[0][1]) / span,
                    "nodes_cores": (tail[-1][2] - tail[0][2]) / span,
                    "machine_cores": (tail[-1][3] - tail[0][3]) / span}
        return {"end_busy": busy, "window": name, "steps": [first, end], "captures": len(caps),
                "aligned": len(same), "aligned_pct": 100.0 * len(same) / ranks,
                "reasons": reasons, "start_to_manifest_s": t1 - t0,
                "end_to_manifest_s": (t1 - wend) if wend else None,
                "start_to_end_s": (wend - t0) if wend else None,
                "daemons_cpu_s": cpu, "daemons_cpu_net_s": cpu - idle_rate * (t1 - t0),
                "coord_cpu": coord}

    def cluster_size(self):
        """The alignment and turnaround figures' cluster: node daemons,
        ranks a node, ranks, and windows to time (fewer on a quick run)."""
        nodes, per = self.reps(16, 4), 64
        return nodes, per, nodes * per, self.reps(5, 2)

    def fig_turnaround(self):
        nodes, per, ranks, windows = self.cluster_size()
        g = "8. turnaround, %d ranks over %d node daemons" % (ranks, nodes)
        murl = "http://127.0.0.1:%d" % self.port()  # the coordinator's state saves
        c, ns, sims = self.cluster_up("t", nodes, per, coord_args=("--metrics", murl))
        self.wait_ranks(c, ranks, timeout=120)
        time.sleep(2)  # step rates known everywhere
        daemons = [c["pid"]] + [d["pid"] for d in ns]
        res = []
        for w in range(windows):
            # the daemons' own rate with no window (1,024 ranks' step events)
            a, ca, t = sum(cpu_s(p) for p in daemons), cpu_s(c["pid"]), time.monotonic()
            time.sleep(3)
            dt = time.monotonic() - t
            idle_rate = (sum(cpu_s(p) for p in daemons) - a) / dt
            coord_rate = (cpu_s(c["pid"]) - ca) / dt
            r = self.one_window(c, daemons, ranks, idle_rate, murl)
            r["idle_cpu_cores"] = idle_rate
            r["coord_idle_cores"] = coord_rate
            res.append(r)
            log("turnaround: %s" % json.dumps(r))
        self.raw["turnaround"] = res
        for s in sims:
            self.procs.stop(s, timeout=30)
        for d in ns + [c]:
            self.stop_daemon(d)
        self.turnaround_rows("turn", g, res, ranks, nodes, 1.0, "<= 1 s after the window's end")
        self.start_rows("turn", g, res, 10.0, ranks, False)
        per_cap = [1000.0 * r["daemons_cpu_net_s"] / ranks for r in res]
        # The net figure means something only if the daemons could take more
        # CPU during the window than before it: on a machine whose cores are
        # all busy, the window's work displaces their steady work instead,
        # and the difference says nothing (it came out negative).
        busy = [r["end_busy"]["machine_cores"] for r in res if r.get("end_busy")]
        saturated = busy and min(busy) >= 0.9 * (os.cpu_count() or 1)
        st, how = judge(per_cap, "<=", 0.5)
        ok = not saturated and min(per_cap) >= 0 and st == "PASS"
        why = ("measured in this run (medians): %.2f s of the daemons' CPU from start to "
               "manifest, %.2f s of it at their steady rate before the window (%.2f cores); "
               "%s" % (statistics.median(r["daemons_cpu_s"] for r in res),
                       statistics.median(r["daemons_cpu_s"] - r["daemons_cpu_net_s"]
                                         for r in res),
                       statistics.median(r["idle_cpu_cores"] for r in res),
                       self.turn_cause("cpu")))
        if saturated or min(per_cap) < 0:
            why = ("not measurable this way here: from the window's end to its manifest the "
                   "machine was %.2f-%.2f of %d cores busy, the daemons ~%.2f cores before the "
                   "window and during it alike (step events of %d ranks at 10 steps/s), so the "
                   "window's work displaced their steady work instead of adding to it and the "
                   "net figure is noise (%.2f to %.2f ms)" % (
                       min(busy or [0]), max(busy or [0]), os.cpu_count() or 1,
                       statistics.median(r["idle_cpu_cores"] for r in res), ranks,
                       min(per_cap), max(per_cap)))
        self.row("turn.cpu_per_capture", g, "daemons' CPU per capture, all %d daemons, net of "
                 "their idle rate" % (nodes + 1), "ms", per_cap, target="<= 0.5 ms",
                 status="PASS" if ok else "MISS",
                 judged=how + "; no run below 0, the machine not saturated",
                 note="utime+stime from /proc over start -> manifest, minus the same daemons' "
                      "rate over the 3 s before (step events of %d ranks at 10 steps/s: %.2f "
                      "cores)" % (ranks, statistics.median(r["idle_cpu_cores"] for r in res)),
                 reason=why)
        self.row("turn.cpu_total", g, "daemons' CPU, start -> manifest, gross", "s",
                 [r["daemons_cpu_s"] for r in res])
        self.coord_cpu_rows("turn", g, res)

    COORD_CPU_LIMIT_MS = 0.1  # coordinator CPU per capture (issue 30)

    def coord_cpu_cause(self, res):
        """Where the coordinator's CPU over the windows went, as measured in
        this run (medians over the windows): its threads, its state saves,
        and the part its steady rate before the window accounts for."""
        med = statistics.median
        cc = [r["coord_cpu"] for r in res]
        tot = med(x["total"] for x in cc)
        caps = med(r["captures"] for r in res)
        span = med(r["start_to_manifest_s"] for r in res)
        rate = med(r.get("coord_idle_cores", 0.0) for r in res)
        steady = med(r.get("coord_idle_cores", 0.0) * r["start_to_manifest_s"] for r in res)
        text = ("measured in this run (medians over %d windows): %.2f s of coordinator CPU a "
                "window for %d captures over %.1f s from start to manifest: its loop thread "
                "%.2f s, nng's threads %.2f s, its thread pool %.2f s" % (
                    len(res), tot, caps, span, med(x["loop"] for x in cc),
                    med(x["nng"] for x in cc), med(x["other"] for x in cc)))
        sv = [x["saves"] for x in cc if "saves" in x]
        if sv:
            text += "; %d state saves (journal writes), %.2f s of its loop's wall time in " \
                    "them" % (med(x["saves"] for x in sv), med(x["seconds"] for x in sv))
        text += ("; its steady rate with no window open (%.3f cores: the nodes' step "
                 "summaries and heartbeats) accounts for %.2f s of it, the window itself for "
                 "%.2f s (%.3f ms a capture)" % (rate, steady, tot - steady,
                                                 1000.0 * (tot - steady) / max(1, caps)))
        return text + "; known from earlier runs: " + self.turn_cause("coord_cpu")

    def coord_cpu_rows(self, key, g, res):
        """The coordinator's own CPU (utime+stime of its process, not the node
        daemons' nor the simulated ranks'), per window and per capture, from
        profctl start to the manifest. The target is judged on the CPU the
        window adds, net of the coordinator's steady rate before it: the
        gross figure grows with how long the window lasts, which is the pace
        of the simulated ranks sharing its 2 cores (issue 30: "the part that
        does not depend on the simulated ranks sharing its cores"). Without
        a steady rate measured, on the gross."""
        net = all("coord_idle_cores" in r for r in res)
        target = "<= %g ms" % self.COORD_CPU_LIMIT_MS
        judged = dict(target=target, goal=("<=", self.COORD_CPU_LIMIT_MS),
                      reason=self.coord_cpu_cause(res))
        per_cap = [1000.0 * r["coord_cpu"]["total"] / max(1, r["captures"]) for r in res]
        self.row(key + ".coord_cpu_capture", g, "coordinator CPU per capture, start -> "
                 "manifest", "ms", per_cap,
                 note="utime+stime of the coordinator's process only (/proc/PID/stat, all "
                      "its threads), gross: its steady work over the window included; its "
                      "save_path on %s%s" % (self.save_fs,
                          "; the target is judged on the row net of its steady rate, since "
                          "the window lasts as long as the simulated ranks' pace on these "
                          "cores makes it" if net else ""),
                 **({} if net else judged))
        self.row(key + ".coord_cpu_window", g, "coordinator CPU per window, start -> manifest",
                 "s", [r["coord_cpu"]["total"] for r in res],
                 note="loop thread %s s; nng's threads %s s; thread pool %s s" % tuple(
                     "-".join("%.2f" % r["coord_cpu"][k] for r in res)
                     for k in ("loop", "nng", "other")))
        if net:
            self.row(key + ".coord_cpu_net", g, "coordinator CPU per capture, net of its "
                     "steady rate", "ms", [1000.0 * (r["coord_cpu"]["total"] -
                                                     r["coord_idle_cores"] *
                                                     r["start_to_manifest_s"]) /
                                           max(1, r["captures"]) for r in res],
                     note="its rate over the 3 s before each window: %s cores" % "-".join(
                         "%.3f" % r["coord_idle_cores"] for r in res), **judged)

    CAUSES = {
        "turn": "latency on saturated cores: from the window's end to its manifest the machine "
                "is ~1.97-1.99 of 2 cores busy (/proc, row 'cores busy' below), the node "
                "daemons ~0.9 core of it, the coordinator ~0.13; the 2 cores are saturated by "
                "the simulated ranks' steady traffic (perf -a "
                "during a window: profd-sim 41 %, the 17 daemons' loops 26 % and nng threads "
                "27 %: context switches and futexes of ~20,000 messages/s of step events and "
                "heartbeats); every hop of a result or a chunk waits for a loop thread to be "
                "scheduled (strace of a node: 10-25 ms from a request's arrival to its reply), "
                "so a node's 64 results and 64 files take seconds to reach the coordinator",
        "cpu": "the daemons' steady cost of the ranks' events, not the window",
        "scale": "the 2 cores are shared by all 257 daemons and the simulators, and the "
                 "node daemons' share of a window's end is the largest: measured 2026-11-26, "
                 "before the coordinator's journal "
                 "(16,384 ranks, /proc every 0.25 s from the window's end to its manifest), "
                 "the machine was 1.75-1.77 of 2 cores busy, the 256 node daemons 0.98-1.00 "
                 "core (each its 64 ranks' results, the forwarded result and 64 files "
                 "streamed: ~0.8 ms of node CPU per capture), the coordinator 0.48-0.49 "
                 "core (its state saves 3.3-5.3 s of its loop per window at ~50-130 ms a "
                 "save, and a file's last chunk is acknowledged after the next save); the "
                 "coordinator's request pool is not the cause (0-27 chunks deferred per "
                 "window; with 4,608 contexts, none deferred, 8.9-18.6 s); on a real "
                 "cluster each node daemon has its own machine",
        "scale_rss": "measured 2026-11-27: 41 MiB before the first window at 16,384 ranks "
                     "since names are interned (pd_rank_t 616 -> 320 bytes, a history entry "
                     "1,016 -> 328, a window member 352 -> 176; 57-58 MiB before), and at "
                     "4,096 ranks the RSS after windows 1/2/3 went 30.7/42.4/48.7 -> "
                     "21.9/26.9/30.9 MiB with glibc's mmap threshold fixed and 2 arenas "
                     "(docs/memory.md); measured 2026-11-28: with finished windows compacted "
                     "(captures re-read from the manifest) and manifest.json, steps.json and "
                     "report.html written streaming, VmHWM after windows 1/2/3 at 16,384 ranks "
                     "104/127/148 -> 79/94/100 MiB (report.html's whole text, 6.5-16 MB growing "
                     "with the steps its heatmap covers, had been the top of each window's "
                     "peak at 4,096 ranks); measured 2026-11-28 with heaptrack on the "
                     "coordinator (--only scale): the peak, at a window record's last write, "
                     "held 85.8 MB of heap: the live step history and the record's copy 27 MB "
                     "and their phase slots 8 MB, members 8.7 MB (176 bytes each, every window "
                     "in the table), the registry 6.8 MB, the journal's encode buffer kept at "
                     "4.2 MB, the report's manifest copy 4.1 MB and why fragment 4.2 MB, the "
                     "steps document 3.2 MB, messages waiting for their reply ~7 MB; the buffer, "
                     "the copy and the fragment cut: peak heap 72.9 MB, VmHWM 69/76/82 MiB "
                     "after windows 1/2/3 (one run, load 9.8); a finished window's members "
                     "freed too (ef61d04): VmHWM 68.5/75.5/77.7 MiB, RSS after the windows "
                     "67.7/68.2/70.0 (no longer growing by a window's members); what is left "
                     "is the history (1.3 KiB a rank at history.steps 128), the window's "
                     "record of step times (10.8 MB), the registry and the last write's "
                     "documents (docs/memory.md); measured 2026-11-28 later, heaptrack: the "
                     "peak held the journal's snapshot text built whole (16.8 MB, taken while "
                     "a window's members and files were written), now written in pieces "
                     "(03898df): peak heap 65.8 -> 59.5 MB, VmHWM 63.6/67.7/69.9 MiB after "
                     "windows 1/2/3 (one run); what the peak holds now: the step history 18.7 "
                     "MB and its phase rings 8.6 MB, the registry 6.8 MB, the members of two "
                     "windows 6.0 MB (the one before, not yet compacted, when the next ends), "
                     "the last write's steps document 6.7 MB, the captures decoded 5 MB; "
                     "a window's record taken only when needed and the steps document in one "
                     "block (eba0bb7, 1bae82c): peak heap 61.7 -> 59.0 MB (heaptrack); the "
                     "node's small files then sent 64 a request (be5751a) made the files' "
                     "arrival the peak, every file of a window held at once (123.9 MB of "
                     "heap, VmHWM 88/118/134 MiB): bounded since 89cc667 (1,024 files or 4 MiB "
                     "of batches written at once, a batch beyond them answered busy), one run "
                     "after it (load 1.5): VmHWM 62.2/72.6/72.6 MiB after windows 1/2/3, RSS "
                     "after them 62.2/64.9/62.2; the heap trimmed once a window's report is "
                     "written (malloc_trim: glibc had kept the freed pages, the resident size "
                     "staying at the window's peak): 61.5/65.5/65.5 MiB, one run; half the "
                     "batch bound made it worse (81.3 MiB: batches answered busy and sent "
                     "again, their bytes received again into nng's messages)",
        "coord_cpu": "perf record -g of the coordinator over a 4,096-rank window (2026-11-27, "
                     "35 s, 1,838 samples, with the machine at a load of 50-70): 58 % of its "
                     "CPU in the kernel, among it 21 % allocating inodes for the capture folders "
                     "and files it creates, one of each per capture (ext4 __ext4_new_inode "
                     "scanning recently deleted inodes: mkdir 13 %, open with O_CREAT 14 %), "
                     "scheduling and futexes 7 %, sendmsg 5 %, fstatat 5 %; libc 26 % (strcmp "
                     "8 %, malloc 3 %, vfprintf 2 %); profd's own code 11 % "
                     "(pd_history_find 3 %); 2026-11-28, perf with frame pointers over a whole "
                     "16,384-rank figure (14,289 samples): the bench's own 2 metrics scrapes a "
                     "window 10 % (profd_ranks compared every rank with every rank before it: "
                     "fixed, 30c6d13), replies through nng 9 %, the ranks' step summaries 7 % "
                     "(most of the steady rate), malloc 13 % of which 95 % of the calls are "
                     "cJSON's nodes decoding messages (88 of 93 million allocations, heaptrack): "
                     "one request, decoded, journalled and answered, per capture's result and "
                     "per file; 2026-11-28, perf with frame pointers on the coordinator from "
                     "the first capture folder of a 16,384-rank window to its manifest (18 s, "
                     "499 Hz, 2 cores shared with builds): the kernel 48 % of its loop and "
                     "pool threads and all but 10 % of nng's; context switches 20 % and "
                     "wakeups 9 % (futex 20 % of the calls' time: nng's threads handing each "
                     "request to the loop and each reply back), the files it creates 21 % "
                     "(openat 7.4 %, mkdirat 5.4 %, pwrite 4.3 %, write 2.0 %, renameat 1.9 %, "
                     "close 1.3 %, fdatasync 0.8 %, linkat 0.7 %), strcmp 4 % (2.6 % finding "
                     "the node a request names among 256: an index since 507aff1), "
                     "pd_history_find 1.9 %, malloc 3.5 %; a node sending its ranks' results "
                     "and small files in batches (one request, one journal batch and one reply "
                     "for many) is the change that would cut the switches: results are batched "
                     "since f6f4b77, files are not; 2026-11-28, the 4,096-rank figure: 0.84-0.91 "
                     "ms in both full runs, 0.17-0.27 ms run alone; perf of its coordinator run "
                     "after the 16,384-rank figure (0.98-1.15 ms): 48 % of its CPU in ext4's "
                     "__ext4_new_inode -> find_inode_bit (recently_deleted) under mkdirat and "
                     "openat on its thread pool, after the tens of thousands of spool files the "
                     "figure before created and removed on the same file system; 35 s of wait "
                     "before it did not remove it (0.64-0.84 ms, one run): it runs before the "
                     "16,384-rank figure since 2026-11-28; the node's small files sent 64 a "
                     "request since be5751a (one request, one journal batch and one reply for "
                     "many): perf of the coordinator over a 4,096-rank figure after it, thread "
                     "hand-offs 29 -> 5 % of its CPU, 46 % creating each capture's folder (24 "
                     "%) and file (22 %), nearly all of it ext4 scanning inodes freed in the "
                     "last 30 s by the bench's own removals of the figure before",
        "scale_16k": "this run was smaller (PROFD_BENCH_SCALE_NODES or --quick); a default "
                     "run measures the target's 16,384 ranks over 256 node daemons",
        "gather_node": "measured 2026-11-27 with up to 8 chunks of a file in flight: the path "
                       "is CPU-bound, not waiting for acks (pipelining alone moved the median "
                       "from 0.43x to 0.42-0.55x); perf: about 22 % of the samples in nng's "
                       "hand-offs between threads (each chunk crosses the loop, nng's I/O "
                       "threads and the pool on both sides), then the copies of each chunk "
                       "(read, frame, socket, write) and xxh64 on both sides; tar|socat is "
                       "two processes copying a pipe into a socket",
        "gather_node_cpu": "every chunk crosses the loop and the thread pool on both sides "
                           "(a JSON header, xxh64 on both sides); until 2026-11-27 the "
                           "coordinator also wrote a member's whole journal record (every file "
                           "of its capture) each time one file ended, quadratic in a capture's "
                           "files (2,002 here): about 2x tar|socat's CPU per GiB, 0.9-1.06x "
                           "since each file's checksum is a record of its own",
        "gather_copy": "measured 2026-11-27: profd's CPU per GiB is 1.18-1.35x cp -r's "
                       "(xxh64 of every byte, which cp -r does not do, and each file written "
                       "as .part through confined paths, then renamed); letting the hash run "
                       "up to 3 buffers ahead of the writes gave no clear gain; its figure "
                       "includes the result's trip to the daemon",
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

    def end_cause(self, key, res):
        """A turnaround row's cause: where this run's CPU went from the
        window's end to its manifest, then what earlier runs measured."""
        busy = [r["end_busy"] for r in res if r.get("end_busy")]
        text = []
        if busy:
            span = lambda k: "%.2f-%.2f" % (min(b[k] for b in busy), max(b[k] for b in busy))
            text.append("measured in this run, from the window's end to its manifest: the "
                        "machine %s of %d cores busy, the node daemons %s cores, the "
                        "coordinator %s" % (span("machine_cores"), os.cpu_count() or 1,
                                            span("nodes_cores"), span("coord_cores")))
        sv = [r["coord_cpu"]["saves"] for r in res if "saves" in r.get("coord_cpu", {})]
        if sv:
            text.append("the coordinator's state saves %.2f-%.2f s of its loop a window "
                        "(%d-%d saves)" % (min(x["seconds"] for x in sv),
                                           max(x["seconds"] for x in sv),
                                           min(x["saves"] for x in sv),
                                           max(x["saves"] for x in sv)))
        text.append("known from earlier runs: " + self.turn_cause(key))
        return "; ".join(text)

    def short_windows(self, bad, key, ranks):
        """The reason of an alignment row: its windows short of 100 %, and
        what is known of a plan that arrived late."""
        text = "windows short of 100 %%: %s" % "; ".join(
            "%s: %d of %d, %s" % (w["window"], w[key], ranks, json.dumps(w["reasons"]))
            for w in bad)
        late = all(set(w["reasons"]) <= {"plan arrived at step N, after start step N"}
                   for w in bad)
        return text + ("; " + self.CAUSES["late_plan"] if bad and late else "")

    def start_rows(self, key, g, res, rate, ranks, derived):
        """Where start -> manifest goes: the ranks' own pace up to the
        window's end, then the turnaround. derived: also the figure at the
        target's pace, 10 steps/s (the step wait replaced by 4 steps of
        0.1 s), judged <= 10 s."""
        pace = [r["start_to_end_s"] for r in res if r.get("start_to_end_s") is not None]
        self.row(key + ".start_end", g, "profctl start --next 2 -> the window's end", "s", pace,
                 note="the ranks' pace: --next 2 plans 2 steps past the newest step the "
                      "coordinator has heard of (up to a summary old) and the window lasts 2 "
                      "steps, so it ends 3-4 steps after the start: %.1f-%.1f s at the %.3g "
                      "steps/s asked of the simulated ranks (slower where the cores are loaded)" %
                      (3.0 / rate, 4.0 / rate, rate))
        if not derived:
            return
        at10 = [r["end_to_manifest_s"] + 0.4 for r in res
                if r.get("end_to_manifest_s") is not None]
        self.row(key + ".start10", g, "profctl start --next 2 -> manifest at 10 steps/s "
                 "(derived)", "s", at10, target="<= 10 s (a 2-step window at 10 steps/s)",
                 goal=("<=", 10.0),
                 note="this run's window's end -> manifest + 4 steps of 0.1 s: its ranks step "
                      "at %.3g steps/s (2 cores cannot step %s ranks faster), so its start -> "
                      "manifest (%s s) is mostly their pace (start -> the window's end above)" % (
                          rate, "{:,}".format(ranks),
                          "-".join("%.0f" % r["start_to_manifest_s"] for r in res)),
                 reason="window's end -> manifest: see that row's cause")

    def turnaround_rows(self, key, g, res, ranks, nodes, limit, target):
        shares = [r["aligned_pct"] for r in res]
        bad = [r for r in res if r["aligned"] != ranks]
        self.row(key + ".aligned", g, "ranks that captured the same steps (--next 2)", "%",
                 shares, target="100 %", goal=(">=", 100.0),
                 note="%d windows" % len(res),
                 reason=self.short_windows(bad, "aligned", ranks))
        ends = [r["end_to_manifest_s"] for r in res if r["end_to_manifest_s"] is not None]
        self.row(key + ".end", g, "window's end -> manifest at the coordinator", "s", ends,
                 target=target, goal=("<=", limit),
                 note="end: the latest capture stop (profd_end_us in the sim traces, "
                      "CLOCK_MONOTONIC); manifest polled every 2 ms",
                 reason=self.end_cause(key, res))
        self.row(key + ".start", g, "profctl start --next 2 -> manifest", "s",
                 [r["start_to_manifest_s"] for r in res],
                 note="%d captures of 4 KiB from %d nodes" % (ranks, nodes))
        busy = [r["end_busy"] for r in res if r.get("end_busy")]
        if busy:
            self.row(key + ".end_cpu", g, "window's end -> manifest: cores busy (coordinator / "
                     "node daemons / whole machine)", "cores",
                     [b["coord_cores"] for b in busy],
                     note="coordinator %s; node daemons %s; machine %s of %d cores (/proc, "
                          "sampled every 0.25 s)" % (
                              "-".join("%.2f" % b["coord_cores"] for b in busy),
                              "-".join("%.2f" % b["nodes_cores"] for b in busy),
                              "-".join("%.2f" % b["machine_cores"] for b in busy),
                              os.cpu_count()))

    # ---------------------------------------------------------- 9. scale

    def fig_scale(self):
        """16,384 ranks over 256 node daemons on this machine. Real: the
        coordinator and the 256 node daemons (profd processes on loopback
        TCP), the protocol between them and with the ranks, and each rank's
        socket, connection and messages (it registers, long-polls its plan,
        sends its step and phase events, delivers its results) and its
        capture engine (client/engine.c: plans adopted, the sim backend
        started and stopped at its step boundaries, traces and markers
        written). Simulated: libprofd's background thread (bench_swarm: one
        thread serves the sockets of 16 nodes' ranks, 1,024, through nng
        aio, with the library's timeouts and backoff), the training loops
        (each rank's steps and phases at their own times: 0.05 step/s by
        default, PROFD_BENCH_SCALE_RATE), the traces (sim backend, 4 KiB
        each) and the machines (all of it on this machine's cores, events
        flushed every 5 s). Until 2026-11-26 every rank was a real libprofd
        client (profd-sim --threads): 16,384 background threads that two
        cores could not schedule (start-up never completed)."""
        nodes = int(os.environ.get("PROFD_BENCH_SCALE_NODES", self.reps(256, 16)))
        self.scale_run(nodes, "scale", True)

    def fig_scale4k(self):
        """Figure 9 at 4,096 ranks over 64 node daemons (8 nodes with
        --quick), 5 windows: the coordinator's CPU per capture at a second
        size, its turnaround and peak RSS beside it. Its ranks step at 16,384
        / 4,096 times figure 9's rate (0.2 step/s by default): the step
        events a second of 16,384 ranks, and windows of 5 s steps (about 2
        minutes in all)."""
        self.scale_run(self.reps(64, 8), "scale4k", False)

    def scale_run(self, nodes, key, full):
        """full: figure 9 with its targets; else the 4,096-rank point (its
        rows without the 16,384-rank targets, but the coordinator's CPU)."""
        per = 64
        swarm = 16  # nodes per bench_swarm process
        ranks = nodes * per
        rate = float(os.environ.get("PROFD_BENCH_SCALE_RATE", "0.05"))
        if not full:  # a quarter of the ranks at 4x the rate: the same events a second
            rate *= 16384.0 / ranks if ranks < 16384 else 1.0
        flush = int(os.environ.get("PROFD_BENCH_SCALE_FLUSH_MS", "5000"))
        # 5 windows at 4,096 ranks (a minute more): with 3, its window's end ->
        # manifest (0.05-0.10 s, then 0.09-0.20 s) reproduced only with the drift
        windows = self.reps(3 if full else 5, 1)
        g = "9%s. scale, %d ranks over %d node daemons" % ("" if full else "b", ranks, nodes)
        t0 = time.monotonic()
        # summaries every second, not every 100 ms: 256 nodes x 10/s of them is
        # 2,560 messages/s of step times for the coordinator to parse
        conf = os.path.join(self.run_root, key + "-node.yaml")
        with open(conf, "w") as f:
            f.write("coordinator:\n  summary_ms: 1000\n")
        # the coordinator's registry holds every rank of the job (4,096 by default)
        cconf = os.path.join(self.run_root, key + "-coord.yaml")
        with open(cconf, "w") as f:
            f.write("limits:\n  max_clients: %d\n" % max(4096, ranks))
            pool = os.environ.get("PROFD_BENCH_SCALE_POOL")
            if pool:  # coordinator.max_node_requests (default 1,024)
                f.write("coordinator:\n  max_node_requests: %s\n" % pool)
        murl = "http://127.0.0.1:%d" % self.port()  # the coordinator's state saves
        c, ns, sims = self.cluster_up("s" if full else "k", nodes, per, rate=rate, nice=10,
                                      flush_ms=flush,
                                      node_args=("--config", conf), swarm=swarm,
                                      coord_args=("--config", cconf, "--metrics", murl))
        self.wait_ranks(c, ranks, timeout=600)
        up_s = time.monotonic() - t0
        sim_tasks = sum(len(os.listdir("/proc/%d/task" % p.pid)) for p in sims)
        time.sleep(5)  # step rates known everywhere
        daemons = [c["pid"]] + [d["pid"] for d in ns]
        hwm0 = hwm_kib(c["pid"])
        res = []
        for w in range(windows):
            crate = self.coord_rate(c)
            r = self.one_window(c, daemons, ranks, 0.0, murl)
            r["coord_idle_cores"] = crate
            r["state_saves"] = r["coord_cpu"]["saves"]
            r["coord_hwm_kib"] = hwm_kib(c["pid"])
            r["coord_rss_kib"] = rss_kib(c["pid"])
            path = os.path.join(c["save"], "default", r["window"], "manifest.json")
            r["manifest_bytes"] = os.path.getsize(path)
            res.append(r)
            log("%s: %s" % (key, json.dumps(r)))
            time.sleep(2)
        node_rss = sorted(rss_kib(d["pid"]) for d in ns)
        self.raw[key] = {"windows": res, "up_s": up_s, "coord_hwm_before_kib": hwm0,
                             "node_rss_kib_median": node_rss[len(node_rss) // 2],
                             "nodes_per_swarm": swarm, "sim_threads": sim_tasks}
        for s in sims:
            self.procs.stop(s, timeout=60)
        for d in ns + [c]:
            self.stop_daemon(d)
        wall = time.monotonic() - t0
        if not full:
            self.scale_point_rows(key, g, res, ranks, nodes, wall, hwm0)
            self.start_rows(key, g, res, rate, ranks, False)
            return
        self.turnaround_rows("scale", g, res, ranks, nodes, 3.0, "<= 3 s after the window's end")
        self.start_rows("scale", g, res, rate, ranks, True)
        self.coord_cpu_rows("scale", g, res)
        self.row("scale.wall", g, "the whole figure: start-up, %d windows, teardown" % windows,
                 "s", [wall], target="<= 15 min (900 s)",
                 goal=("<=", 900),
                 note="what deploy/bench.sh --only scale adds to its build",
                 reason="measured in this run: start-up (daemons up, ranks registered) %.0f "
                        "s, the %d windows %.0f s from start to manifest, the rest (the "
                        "pauses between them, teardown) %.0f s" % (
                            up_s, len(res), sum(r["start_to_manifest_s"] for r in res),
                            wall - up_s - sum(r["start_to_manifest_s"] for r in res)))
        hwm = [r["coord_hwm_kib"] / 1024.0 for r in res]
        self.row("scale.coord_hwm", g, "coordinator peak RSS (VmHWM)", "MiB", hwm,
                 target="<= 64 MiB", goal=("<=", 64),
                 note="%.1f MiB before the first window, with %d ranks registered; a node "
                      "daemon %.1f MiB" % (hwm0 / 1024.0, ranks, node_rss[len(node_rss) // 2] /
                                           1024.0),
                 reason="measured in this run: %.1f MiB before the first window with %d ranks "
                        "registered, %s MiB after each window (VmHWM; RSS %s MiB); known from "
                        "earlier runs: %s" % (
                            hwm0 / 1024.0, ranks, ", ".join("%.0f" % x for x in hwm),
                            ", ".join("%.0f" % (r["coord_rss_kib"] / 1024.0) for r in res),
                            self.turn_cause("scale_rss")))
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
        self.row("scale.deferred", g, "file chunks the coordinator deferred, per window", "chunks",
                 [x["deferred"] for x in sv],
                 note="answered with no progress at coordinator.max_node_requests (1,024: each "
                      "of the %d nodes streams up to 16 chunks at once), sent again by their "
                      "node after 200 ms, doubling up to 5 s (profd_chunks_deferred_total)" % nodes)
        if ranks < 16384:
            self.row("scale.target", g, "16,384 ranks over 256 node daemons (the target's size)",
                     "ranks", [], target="a window aligned, <= 3 s, <= 64 MiB",
                     status="MISS", judged="not measured at this size",
                     note="this run: %d ranks; a default run measures 16,384" % ranks,
                     reason=self.turn_cause("scale_16k"))
        self.row("scale.setup", g, "start-up: %d daemons up, %d ranks registered" % (
            nodes + 1, ranks), "s", [up_s],
                 note="real: the %d daemons (loopback TCP, nodes' coordinator.summary_ms 1000), "
                      "the protocol, each rank's socket, messages and capture engine; "
                      "simulated: libprofd's background thread and the training loops, %d "
                      "nodes' ranks a thread in %d bench_swarm processes (niced 10, %.3g "
                      "steps/s, flush every %d ms; %d threads in all), traces by the sim "
                      "backend" % (nodes + 1, swarm, len(sims), rate, flush, sim_tasks))


    def scale_point_rows(self, key, g, res, ranks, nodes, wall, hwm0):
        """The 4,096-rank point: the coordinator's CPU judged, the rest
        reported beside it (their targets are the 16,384-rank figure's)."""
        self.coord_cpu_rows(key, g, res)
        self.row(key + ".end", g, "window's end -> manifest at the coordinator", "s",
                 [r["end_to_manifest_s"] for r in res if r["end_to_manifest_s"] is not None],
                 note="as in 9; %s of %d ranks aligned per window" % (
                     "-".join("%d" % r["aligned"] for r in res), ranks))
        self.row(key + ".start", g, "profctl start --next 2 -> manifest", "s",
                 [r["start_to_manifest_s"] for r in res],
                 note="%d captures of 4 KiB from %d nodes" % (ranks, nodes))
        self.row(key + ".coord_hwm", g, "coordinator peak RSS (VmHWM)", "MiB",
                 [r["coord_hwm_kib"] / 1024.0 for r in res],
                 note="%.1f MiB before the first window" % (hwm0 / 1024.0))
        self.row(key + ".wall", g, "the whole figure: start-up, %d windows, teardown" %
                 len(res), "s", [wall])
