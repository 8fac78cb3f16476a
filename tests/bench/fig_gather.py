# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Figures 6 and 10: gathering (same file system, another, across nodes),
idle and beside CPU-bound processes, for tests/bench/run.py."""

import resource
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from benchlib import (PY, cpu_s, fs_type, log, raw_stream, read_line, remove_window,
                      tree_inode, warm)


class GatherFigures:
    """Mixed into run.Bench: self.daemon, self.ctl, self.row, ..."""

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
        """A tmpfs of its own for a figure (a mount per call, each unmounted
        by cleanup: a second figure's mount once hid the first's, left
        mounted after every full run), or a folder in /dev/shm."""
        path = tempfile.mkdtemp(prefix="profd-bench-tmpfs-", dir="/tmp")
        self.tmpfs.append(path)
        if os.geteuid() == 0:
            # the daemons keep limits.min_free_bytes (1 GiB) free: room for
            # that besides the data, also for --quick's small tree
            mib = size_bytes // (1 << 20) + 1536
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % mib, "profd-bench",
                                path], capture_output=True)
            if r.returncode == 0:
                self.tmpfs_mounted.append(path)
                return path, "tmpfs mounted for the run"
        if os.path.isdir("/dev/shm"):
            shm = tempfile.mkdtemp(prefix="profd-bench-", dir="/dev/shm")
            self.tmpfs.append(shm)
            return shm, "/dev/shm"
        raise RuntimeError("no tmpfs (mount needs root; no /dev/shm)")

    def gather_client(self, d, stage_file):
        """bench_gather registered with daemon d: it captures what stage_file
        names, as a rank of job "bench"."""
        p = self.procs.start([self.bin["gather"], "--url", d["worker"], "--stage-file",
                              stage_file, "--rate", "20"],
                             log_path=os.path.join(self.run_root, "gather.log"),
                             stdout=subprocess.PIPE)
        self.wait_ranks(d, 1, job="bench")
        return p

    def node_pair(self, tag, save_path, stage_file):
        """A coordinator saving into save_path and one node daemon linked to
        it over loopback TCP (plain tcp://, opted in with
        --insecure-tcp-links, like socat), a bench_gather client on the node:
        (coordinator, node, client), the client's rank known to both."""
        port = self.port()
        c = self.daemon(tag + "coord", "--coordinator-listen", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links", save_path=save_path)
        n = self.daemon(tag + "node", "--coordinator-url", "tcp://127.0.0.1:%d" % port,
                        "--insecure-tcp-links")
        cl = self.gather_client(n, stage_file)
        self.wait_ranks(c, 1, job="bench")
        return c, n, cl

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
            return self.gather_client(d, stage_file)

        # same file system: rename, then checksums (default) or none
        nochk = os.path.join(self.run_root, "nochecksum.yaml")
        with open(nochk, "w") as f:
            f.write("checksum: none\n")
        for label, extra, chk in (("xxh64", [], True), ("none", ["--config", nochk], False)):
            d = self.daemon("same-" + label, *extra)
            cl = client_for(d)
            for tree, n, b, key in ((small, small_n, small_bytes, "small"),
                                    (data, nfiles, total, "full")):
                vals, renamed, summed = [], [], []
                for i in range(reps + 1):  # the first is a warm-up
                    ino = tree_inode(tree)
                    t, man, wdir = self.gather_once(d, d, cl, tree, stage_file,
                                                    "s%s%s%d" % (label, key, i), move=True)
                    gathered = os.path.join(wdir, man["captures"][0]["dir"])
                    renamed.append(tree_inode(gathered) == ino)
                    # files the daemon read for a checksum (a moved one is not read)
                    summed.append(sum(1 for f in man["captures"][0]["files"]
                                      if (f.get("checksum") or "").startswith("xxh64:")))
                    os.rename(gathered, tree)  # the tree again, for the next round
                    self.check_manifest(man, n, b, chk)
                    remove_window(wdir)
                    if i:
                        vals.append(t)
                res["same_%s_%s" % (label, key)] = vals
                res["same_%s_%s_renamed" % (label, key)] = renamed  # one per gathering
                res["same_%s_%s_summed" % (label, key)] = summed
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

        def cp_once(i):
            # cp -r copies a staged tree too, prepared as profd's is
            src = self.stage(data, "cp-src", False)
            dst = os.path.join(tmpfs, "cp-%d" % i)
            t0 = time.monotonic()
            subprocess.run(["cp", "-r", src, dst], check=True)
            tc = time.monotonic() - t0
            shutil.rmtree(dst)
            shutil.rmtree(src)
            return tc

        for i in range(reps + 1):
            # in turns: cp -r first in odd repetitions, profd's two first in
            # even ones, so that what the first leaves behind (pages freed,
            # removed files) falls on both; in a fixed order, 0.44x in one
            # full run and 0.99x in the next (2026-11-28), cp -r 1.75x slower
            # and profd not
            if i % 2:
                tc = cp_once(i)
            t, man, wdir = self.gather_once(d, d, cl, data, stage_file, "c%d" % i)
            self.check_manifest(man, nfiles, total)
            remove_window(wdir)
            t0_, man, wdir = self.gather_once(d0, d0, cl0, data, stage_file, "z%d" % i)
            self.check_manifest(man, nfiles, total, False)
            remove_window(wdir)
            if i % 2 == 0:
                tc = cp_once(i)
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
        c, n, cl = self.node_pair("g", os.path.join(tmpfs, "coord-out"), stage_file)
        raw, streamed = [], []
        for i in range(reps + 1):
            tr = raw_stream(data, os.path.join(tmpfs, "raw-%d" % i), self.port())
            shutil.rmtree(os.path.join(tmpfs, "raw-%d" % i))
            t, man, wdir = self.gather_once(n, c, cl, data, stage_file, "n%d" % i)
            self.check_manifest(man, nfiles, total)
            remove_window(wdir)
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
        def checksum_pass(label):
            """What the manifests say of a checksum pass: a renamed file is
            listed as moved, not read again, so there is none to time."""
            summed = res["same_%s_full_summed" % label]
            if not any(summed):
                return "no checksum pass: renamed"
            return "%d-%d files checksummed after the rename" % (min(summed), max(summed))
        ren_none, ren_none_note = renamed("none")
        ren_x, ren_x_note = renamed("xxh64")
        ratio_none = statistics.median(res["same_none_full"]) / statistics.median(
            res["same_none_small"])
        self.row("gather.same_none_small", g, "same FS, checksum none: %d small files" % small_n,
                 "ms", ms(res["same_none_small"]))
        self.row("gather.same_none_full", g, "same FS, checksum none: + 2 x %d MiB" % large_mib,
                 "ms", ms(res["same_none_full"]), target="rename, O(1) in bytes",
                 status="PASS" if ren_none and ratio_none < 2 else "MISS",
                 judged="renamed in every gathering; median / small tree's median < 2",
                 note="%s; %.2fx the small tree's time for %.0fx its bytes" % (
                     ren_none_note, ratio_none, total / small_bytes),
                 reason="the gather copied (%s)" % ren_none_note if not ren_none else
                 "the gather grew with the bytes: %.2fx the small tree's median" % ratio_none)
        ratio_x = statistics.median(res["same_xxh64_full"]) / statistics.median(
            res["same_xxh64_small"])
        self.row("gather.same_xxh64_small", g, "same FS, xxh64 (default): %d small files" %
                 small_n, "ms", ms(res["same_xxh64_small"]))
        self.row("gather.same_xxh64_full", g, "same FS, xxh64 (default): + 2 x %d MiB" %
                 large_mib, "ms", ms(res["same_xxh64_full"]), target="rename, O(1) in bytes",
                 status="PASS" if ren_x and ratio_x < 2 else "MISS",
                 judged="renamed in every gathering; median / small tree's median < 2",
                 note="%s; %.2fx the small tree's time; %s" % (ren_x_note, ratio_x,
                                                              checksum_pass("xxh64")),
                 reason="the gather copied (%s)" % ren_x_note if not ren_x else
                 "the gather grew with the bytes: %.2fx the small tree's median; %s" % (
                     ratio_x, checksum_pass("xxh64")))
        cr = [a / b for a, b in zip(res["copy_cp"], res["copy_profd"])]
        self.row("gather.copy_profd", g, "other FS (disk -> tmpfs), profd: " + tree, "s",
                 res["copy_profd"], note="%.0f MiB/s; copy and xxh64 in one pass; the spool copy is removed after "
                 "the manifest" % (
                     mib / statistics.median(res["copy_profd"])))
        self.row("gather.copy_cp", g, "baseline: cp -r of the same tree, same FS pair", "s",
                 res["copy_cp"], note="%.0f MiB/s" % (mib / statistics.median(res["copy_cp"])))
        cr0 = [a / b for a, b in zip(res["copy_cp"], res["copy_profd_none"])]
        self.row("gather.copy_ratio", g, "ratio: profd throughput / cp -r", "x", cr,
                 target=">= 0.9x cp -r", goal=(">=", 0.9), note="paired by repetition",
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
                 target=">= 0.8x raw TCP", goal=(">=", 0.8), note="paired by repetition",
                 reason="measured in this run (medians): profd %.0f MiB/s, the raw stream %.0f "
                        "MiB/s over the same loopback; known from earlier runs: %s" % (
                            mib / statistics.median(res["node_profd"]),
                            mib / statistics.median(res["node_raw"]),
                            self.turn_cause("gather_node")))

    # ---------------------------------------------------------- 10. gather, idle and loaded

    def busy(self, n):
        """n CPU-bound processes at the daemons' priority (a competing job)."""
        return [self.procs.start([PY, "-c", "while True: pass"]) for _ in range(n)]

    def fig_gatherload(self):
        """Across nodes (vs tar | socat) and to another file system (vs cp -r),
        on an idle machine and beside a CPU-bound process on each core, with
        the CPU-seconds per GiB of each side."""
        g = "10. gather, idle and with the cores loaded"
        # 5: with 3, the loaded ratios' min-max (0.80-1.03, then 0.45-0.85) held
        # neither run's median in the other's; 7: with 5, the idle ratio across
        # nodes (0.65-1.14, then 0.80-1.39) neither
        reps = self.reps(7, 1)
        data, small, small_n, large_mib, total = self.make_tree()
        nfiles = small_n + 2
        gib = total / 2**30
        tmpfs, tmpfs_how = self.mount_tmpfs(3 * total)
        stage_file = os.path.join(self.run_root, "stage-path-l")
        open(stage_file, "w").close()

        def client_for(d):
            return self.gather_client(d, stage_file)

        def children_cpu():
            r = resource.getrusage(resource.RUSAGE_CHILDREN)
            return r.ru_utime + r.ru_stime

        c, n, cn = self.node_pair("l", os.path.join(tmpfs, "lcoord-out"), stage_file)
        d = self.daemon("lcopy", "--spool", os.path.join(self.data_root, "lcopy-spool"),
                        save_path=os.path.join(tmpfs, "lcopy-out"))
        cd = client_for(d)
        res = {}
        for cond in ("idle", "loaded"):
            hogs = self.busy(os.cpu_count() or 2) if cond == "loaded" else []
            r = {k: [] for k in ("node", "raw", "node_cpu", "raw_cpu", "copy", "cp", "copy_cpu",
                                 "cp_cpu")}
            for i in range(reps + 1):  # the first is a warm-up
                m = {}

                def raw():
                    a = children_cpu()
                    m["raw"] = raw_stream(data, os.path.join(tmpfs, "lraw-%d" % i), self.port())
                    m["raw_cpu"] = children_cpu() - a
                    shutil.rmtree(os.path.join(tmpfs, "lraw-%d" % i))

                def node():
                    a = cpu_s(n["pid"]) + cpu_s(c["pid"])
                    m["node"], man, wdir = self.gather_once(n, c, cn, data, stage_file,
                                                            "ln%s%d" % (cond, i))
                    m["node_cpu"] = cpu_s(n["pid"]) + cpu_s(c["pid"]) - a
                    self.check_manifest(man, nfiles, total)
                    remove_window(wdir)

                def cp():
                    src = self.stage(data, "lcp-src", False)
                    dst = os.path.join(tmpfs, "lcp-%d" % i)
                    a, t0 = children_cpu(), time.monotonic()
                    subprocess.run(["cp", "-r", src, dst], check=True)
                    m["cp"], m["cp_cpu"] = time.monotonic() - t0, children_cpu() - a
                    shutil.rmtree(dst)
                    shutil.rmtree(src)

                def copy():
                    a = cpu_s(d["pid"])
                    m["copy"], man, wdir = self.gather_once(d, d, cd, data, stage_file,
                                                            "lc%s%d" % (cond, i))
                    m["copy_cpu"] = cpu_s(d["pid"]) - a
                    self.check_manifest(man, nfiles, total)
                    remove_window(wdir)

                # each pair in turns, baseline first then profd first: what the
                # first of a pair leaves (pages, a warm cache) falls on both sides
                for step in ((raw, node, cp, copy) if i % 2 else (node, raw, copy, cp)):
                    step()
                t, tr, tc, tp = m["node"], m["raw"], m["cp"], m["copy"]
                node_cpu, raw_cpu, copy_cpu, cp_cpu = (m["node_cpu"], m["raw_cpu"],
                                                       m["copy_cpu"], m["cp_cpu"])
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
                     goal=(">=", 0.9),
                     note="%s; profd %.2f s, tar|socat %.2f s; CPU-s/GiB: profd %.2f (node + "
                          "coordinator), tar|socat %.2f (%.2fx)" % (
                              tree, med(r["node"]), med(r["raw"]), cpu_n, cpu_r,
                              cpu_n / max(cpu_r, 1e-9)),
                     reason="measured in this run (medians): profd %.2f s, tar|socat %.2f s; "
                            "known from earlier runs: %s" % (
                                med(r["node"]), med(r["raw"]), self.turn_cause("gather_node")))
            ncr = [a / max(b, 1e-9) for a, b in zip(r["node_cpu"], r["raw_cpu"])]
            self.row("gl.node_cpu_%s" % cond, g, "across nodes, CPU-s per GiB: profd / tar|socat, "
                     "%s" % how, "x", ncr,
                     target="<= 1.2x", goal=("<=", 1.2),
                     note="profd %.2f, tar|socat %.2f CPU-s/GiB" % (cpu_n, cpu_r),
                     reason="measured in this run: profd %.2f, tar|socat %.2f CPU-s/GiB; known from "
                            "earlier runs: %s" % (
                         cpu_n, cpu_r, self.turn_cause("gather_node_cpu")))
            cr = [a / b for a, b in zip(r["cp"], r["copy"])]
            cpu_c, cpu_cp = med(r["copy_cpu"]) / gib, med(r["cp_cpu"]) / gib
            self.row("gl.copy_%s" % cond, g, "other FS (disk -> tmpfs) / cp -r, %s" % how, "x",
                     cr, target=">= 0.95x cp -r",
                     goal=(">=", 0.95),
                     note="%s; profd %.2f s, cp -r %.2f s; xxh64 on" % (
                         tree, med(r["copy"]), med(r["cp"])),
                     reason="measured in this run (medians): profd %.2f s, cp -r %.2f s; "
                            "known from earlier runs: %s" % (med(r["copy"]), med(r["cp"]),
                                                             self.turn_cause("gather_copy")))
            ccr = [a / max(b, 1e-9) for a, b in zip(r["copy_cpu"], r["cp_cpu"])]
            self.row("gl.copy_cpu_%s" % cond, g, "other FS, CPU-s per GiB: profd / cp -r, %s" %
                     how, "x", ccr,
                     target="<= 1.2x", goal=("<=", 1.2),
                     note="profd %.2f, cp -r %.2f CPU-s/GiB" % (cpu_c, cpu_cp),
                     reason="measured in this run: profd %.2f, cp -r %.2f CPU-s/GiB; known from "
                            "earlier runs: %s" % (
                         cpu_c, cpu_cp, self.turn_cause("gather_copy_cpu")))

