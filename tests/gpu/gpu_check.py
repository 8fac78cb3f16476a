# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The GPU check's Python side (tests/gpu/run.sh drives it):

  env OUT.json                 what this Python, torch and CUDA are; the CUDA
                               runtime file torch loaded (for the C backend)
  train OUT.json               a small PyTorch training loop on the GPU (CPU
                               without one) under `import profd`, job and
                               windows opened beforehand by run.sh
  cworker OUT.json             a worker that never imports torch: its `cuda`
                               captures go to libprofd's C backend (dlopen of
                               libcudart, cudaProfilerStart/Stop)
  report WINDOWS.tsv STATE.json ENV.json TRAIN.json CWORKER.json SUMMARY.json
                               per window: state, captures (status, reason,
                               files, sizes) and checks inside the outputs
                               (CUDA kernels in the torch traces, segments in
                               the memory snapshot); exit 0 when every window
                               is what this machine should give, else 1

Standard library only, except torch in env and train (and pickle loading a
snapshot). Each subcommand writes its JSON even when it fails part-way.
"""

import collections
import glob
import gzip
import inspect
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
import traceback


def write_json(path, doc):
    text = json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n"
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run_text(cmd, timeout=20):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return (p.stdout + p.stderr).strip()
    except Exception as e:  # not installed, hung
        return "%s: %s" % (type(e).__name__, e)


def loaded_libraries(pattern):
    """Files of this process's mappings whose name matches `pattern`."""
    out = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if re.search(pattern, os.path.basename(path)) and path not in out:
                        out.append(path)
    except OSError:
        pass
    return out


def profd_info():
    import profd

    return {"version": profd.__version__, "load_error": profd.load_error(), "package": os.path.dirname(profd.__file__)}


# ---- env ----


def cmd_env(out):
    doc = {"python": sys.version.split()[0], "executable": sys.executable, "errors": []}
    try:
        doc["profd"] = profd_info()
    except Exception as e:
        doc["errors"].append("import profd: %s: %s" % (type(e).__name__, e))
    doc["nvidia_smi"] = run_text(["nvidia-smi", "-L"]) if shutil.which("nvidia-smi") else None
    doc["nsys"] = shutil.which("nsys")
    doc["torch_symbolize_mode"] = os.environ.get("TORCH_SYMBOLIZE_MODE")
    try:
        import torch

        doc["torch"] = torch.__version__
        doc["torch_cuda"] = torch.version.cuda
        doc["cuda_available"] = bool(torch.cuda.is_available())
        try:
            fn = torch.cuda.memory._record_memory_history
            doc["record_memory_history_params"] = list(inspect.signature(fn).parameters)
            from profd import settings as S

            doc["record_memory_history_args"] = S.memory_history_args({}, inspect.signature(fn).parameters)
        except Exception as e:
            doc["errors"].append("_record_memory_history: %s: %s" % (type(e).__name__, e))
        if doc["cuda_available"]:
            t0 = time.monotonic()
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            doc["cuda_init_s"] = round(time.monotonic() - t0, 3)
            doc["device_count"] = torch.cuda.device_count()
            doc["device"] = torch.cuda.get_device_name(0)
            doc["capability"] = list(torch.cuda.get_device_capability(0))
            doc["memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    except Exception as e:
        doc["errors"].append("torch: %s: %s" % (type(e).__name__, e))
    # the runtime torch loaded; else one a pip package or a toolkit holds
    found = loaded_libraries(r"^libcudart\.so")
    doc["cudart_loaded"] = list(found)
    if not found:
        roots = [p for p in sys.path if p.endswith("-packages")]
        for pat in [os.path.join(r, "nvidia", "**", "libcudart.so*") for r in roots] + [
            "/usr/local/cuda*/lib*/libcudart.so*"
        ]:
            found += sorted(glob.glob(pat, recursive=True))
    doc["cudart"] = found[0] if found else None
    write_json(out, doc)
    return 0


# ---- train ----


def wait_for(pred, timeout):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def cmd_train(out, job, steps, windows, micro):
    doc = {"job": job, "steps": [], "errors": []}
    try:
        _train(doc, job, steps, windows, micro)
        rc = 0
    except Exception as e:
        doc["errors"].append("%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))
        rc = 1
    write_json(out, doc)
    for e in doc["errors"]:
        print("train: " + e, file=sys.stderr)
    return rc


def _train(doc, job, steps, windows, micro):
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import profd
    import torch

    doc["profd"] = profd_info()
    if doc["profd"]["load_error"]:
        raise RuntimeError("libprofd did not load: %s" % doc["profd"]["load_error"])
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    doc["device"] = torch.cuda.get_device_name(0) if cuda else "cpu"
    torch.manual_seed(0)
    width = 2048 if cuda else 256
    model = torch.nn.Sequential(
        torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width), torch.nn.LayerNorm(width)
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = 64

    def micro_batch():
        x = torch.randn(batch, width, device=dev)
        y = torch.randn(batch, width, device=dev)
        loss = torch.nn.functional.mse_loss(model(x), y) / micro
        loss.backward()
        return loss

    # warm-up outside any step: cuBLAS handles, the allocator's first segments
    micro_batch()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if cuda:
        torch.cuda.synchronize()

    c = open_client(profd, "trainer", job, "torch")
    for step in range(1, steps + 1):
        t0 = time.monotonic()
        with c.step(step):
            with c.phase("train"):
                for _ in range(micro):
                    loss = micro_batch()
                    c.substep()
                opt.step()
                opt.zero_grad(set_to_none=True)
                if cuda:
                    torch.cuda.synchronize()
        dt = time.monotonic() - t0
        doc["steps"].append({"step": step, "s": round(dt, 4), "loss": round(float(loss), 5)})
        print("train: step %d %.3f s loss %.4f" % (step, dt, float(loss)), flush=True)
        time.sleep(0.05)
    if cuda:
        doc["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    doc["stats"] = c.stats()._asdict()
    c.close()


def open_client(profd, role, job, backend):
    """A registered client of rank 0, with the plan of the windows in hand."""
    c = profd.Client(role=role, rank=0, job=job, backend=backend)
    if not wait_for(lambda: c.stats().connected, 15):
        raise RuntimeError("the client did not register with profd within 15 s")
    time.sleep(0.5)  # the plan with the windows arrives; a step adopts it
    return c


# ---- cworker ----


def cmd_cworker(out, job, steps, windows):
    doc = {"job": job, "steps": [], "errors": []}
    try:
        import profd

        doc["profd"] = profd_info()
        if doc["profd"]["load_error"]:
            raise RuntimeError("libprofd did not load: %s" % doc["profd"]["load_error"])
        c = open_client(profd, "cworker", job, "cuda")
        for step in range(1, steps + 1):
            t0 = time.monotonic()
            with c.step(step):
                time.sleep(0.05)
            doc["steps"].append({"step": step, "s": round(time.monotonic() - t0, 4)})
        doc["stats"] = c.stats()._asdict()
        c.close()
        doc["torch_imported"] = "torch" in sys.modules
        doc["cudart_loaded"] = loaded_libraries(r"^libcudart\.so")
        rc = 0
    except Exception as e:
        doc["errors"].append("%s: %s" % (type(e).__name__, e))
        rc = 1
    write_json(out, doc)
    for e in doc["errors"]:
        print("cworker: " + e, file=sys.stderr)
    return rc


# ---- report ----


def load_trace(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def torch_trace_checks(path):
    doc = load_trace(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    spans = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]
    cats = collections.Counter(e.get("cat") for e in spans)
    kernels = [e for e in spans if e.get("cat") == "kernel"]
    by_kernel = collections.Counter()
    for e in kernels:
        by_kernel[e.get("name", "")[:90]] += e.get("dur", 0)
    procs = sorted(
        {str(e.get("args", {}).get("name")) for e in events if isinstance(e, dict) and e.get("name") == "process_name"}
    )
    props = doc.get("deviceProperties", []) if isinstance(doc, dict) else []
    return {
        "events": len(events),
        "categories": {str(k): n for k, n in cats.most_common(12)},
        "kernels": len(kernels),
        "kernels_on_device": sorted({e.get("args", {}).get("device") for e in kernels}, key=str),
        "top_kernels_us": [[k, round(v, 1)] for k, v in by_kernel.most_common(5)],
        "cuda_runtime": cats.get("cuda_runtime", 0),
        "gpu_memcpy": cats.get("gpu_memcpy", 0) + cats.get("gpu_memset", 0),
        "device_properties": [p.get("name") for p in props if isinstance(p, dict)],
        "processes": procs,
        "aten_ops": sum(1 for e in spans if str(e.get("name", "")).startswith("aten::")),
        "profd_markers": sorted({e.get("name") for e in spans if e.get("cat") == "profd"}),
    }


def snapshot_checks(path):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    segs = snap.get("segments", []) if isinstance(snap, dict) else []
    traces = snap.get("device_traces", []) if isinstance(snap, dict) else []
    entries = [e for t in traces for e in t]
    return {
        "keys": sorted(snap) if isinstance(snap, dict) else str(type(snap)),
        "segments": len(segs),
        "segment_bytes": sum(s.get("total_size", 0) for s in segs),
        "allocated_bytes": sum(s.get("allocated_size", 0) for s in segs),
        "blocks": sum(len(s.get("blocks", [])) for s in segs),
        "trace_entries": len(entries),
        "actions": {str(k): n for k, n in collections.Counter(e.get("action") for e in entries).items()},
        "entries_with_frames": sum(1 for e in entries if e.get("frames")),
    }


NO_CUDA_TORCH = "CUDA is not available"
RUNTIME_MISSING = re.compile(r"^cuda: (CUDA runtime not found|cudaProfilerStart returned error \d+|cannot load )")


def judge(key, w, gpu, cap):
    """(ok, why) for one window's only capture, against what this machine should give."""
    if cap is None:
        return False, "no capture in the manifest"
    st, reason, files = cap["status"], cap.get("reason") or "", cap.get("files", [])
    checks = cap.get("checks", {})
    if "error" in checks:
        return False, "reading the output failed: " + checks["error"]
    if key in ("torch", "torch_sched"):
        if st != "complete" or not files:
            return False, "torch capture %s (%s)" % (st, reason)
        if gpu:
            if checks.get("kernels", 0) == 0:
                return False, "no CUDA kernel event in the trace"
            if not checks.get("device_properties"):
                return False, "%d CUDA kernels but no deviceProperties in the trace" % checks["kernels"]
            return True, "%d CUDA kernels (devices %s), %d CUDA runtime calls; deviceProperties %s" % (
                checks["kernels"], checks.get("kernels_on_device"), checks.get("cuda_runtime", 0),
                ", ".join(map(str, checks["device_properties"])))
        return checks.get("aten_ops", 0) > 0, "no GPU: CPU activities only (%d aten ops, %d kernels)" % (
            checks.get("aten_ops", 0), checks.get("kernels", 0))
    if key == "torch_memory":
        if gpu:
            if st != "complete" or not files:
                return False, "torch_memory capture %s (%s)" % (st, reason)
            if checks.get("segments", 0) == 0:
                return False, "the snapshot has no segment"
            return True, "%d segments, %d bytes reserved, %d trace entries" % (
                checks["segments"], checks["segment_bytes"], checks["trace_entries"])
        return (st == "failed" and reason.startswith("torch_memory: " + NO_CUDA_TORCH)), "no GPU: " + reason
    if key == "cuda":
        if gpu:
            # nothing of its own: the library's markers file only (nsys records, not profd)
            own = [f for f in files if not re.match(r"profd-markers-p\d+\.json$", f["path"])]
            return (st == "complete" and not own), "%s, %d file(s) besides the markers%s" % (
                st, len(own), " (%s)" % reason if reason else "")
        return (st == "failed" and reason.startswith("cuda: " + NO_CUDA_TORCH)), "no GPU: " + reason
    if key == "cuda_c":
        # the C backend's own search: a runtime on the loader's path or none
        if st == "complete":
            return True, "complete: cudaProfilerStart/Stop through a libcudart on the loader's path"
        return bool(RUNTIME_MISSING.match(reason)), "%s: %s" % (st, reason)
    if key == "cuda_c_lib":
        if gpu:
            return st == "complete", "%s%s" % (st, ": " + reason if reason else "")
        return st in ("complete", "failed") and (st == "complete" or bool(RUNTIME_MISSING.match(reason))), reason or st
    return False, "unknown window key"


def read_windows(tsv, state_path):
    """run.sh's list of windows (key, tool, steps, id, folder, profctl wait's
    exit status; or key, "skip", reason) with their state from `profctl
    --json windows`."""
    doc = {"windows": {}, "errors": []}
    try:
        with open(state_path) as f:
            states = {w["id"]: w for w in json.load(f)["windows"]}
    except Exception as e:
        states = {}
        doc["errors"].append("profctl --json windows: %s: %s" % (type(e).__name__, e))
    try:
        with open(tsv) as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError as e:
        doc["errors"].append("no list of windows: %s" % e)
        rows = []
    for row in rows:
        key = row[0]
        if row[1] == "skip":
            doc["windows"][key] = {"skipped": row[2] if len(row) > 2 else "skipped"}
            continue
        tool, steps, wid, path, rc = (row + [""] * 5)[1:6]
        w = {"kind": key, "tool": tool, "steps": steps, "path": path}
        w["id"] = int(wid) if wid.isdigit() else None
        w["wait_rc"] = int(rc) if rc.lstrip("-").isdigit() else rc
        st = states.get(w["id"], {})
        for k in ("name", "state", "reason", "selected", "complete", "failed", "missed", "truncated", "bytes"):
            w[k] = st.get(k)
        if w["id"] is None:
            doc["errors"].append("window %s was not opened: %s" % (key, path))
        doc["windows"][key] = w
    return doc


def cmd_report(windows_path, state_path, env_path, train_path, cworker_path, out):
    def read(p):
        try:
            with open(p) as f:
                return json.load(f)
        except Exception as e:
            return {"missing": "%s: %s" % (type(e).__name__, e)}

    wins = read_windows(windows_path, state_path)
    env = read(env_path)
    gpu = bool(env.get("cuda_available"))
    summary = {
        "gpu": gpu,
        "note": (
            "GPU: %s" % env.get("device")
            if gpu
            else "no GPU: torch.cuda.is_available() is False here; every backend's failure without a device is checked"
        ),
        "env": env,
        "train": read(train_path),
        "cworker": read(cworker_path),
        "windows": {},
        "errors": list(wins.get("errors", [])) + ["env: %s" % e for e in env.get("errors", [])],
    }
    ok_all = not summary["errors"]
    for key, w in (wins.get("windows") or {}).items():
        entry = dict(w)
        if w.get("skipped"):
            entry["ok"] = True
            summary["windows"][key] = entry
            continue
        man = None
        mpath = os.path.join(w.get("path") or "", "manifest.json")
        try:
            with open(mpath) as f:
                man = json.load(f)
        except Exception as e:
            entry["manifest_error"] = "%s: %s" % (type(e).__name__, e)
        caps = []
        for c in (man or {}).get("captures", []):
            cap = {k: c.get(k) for k in ("role", "rank", "status", "reason", "first_step", "last_step", "dir", "substeps")}
            cap["files"] = [{"path": f["path"], "bytes": f["bytes"]} for f in c.get("files", [])]
            root = os.path.join(w["path"], c["dir"]) if c.get("dir") else None
            try:
                for f in cap["files"]:
                    p = os.path.join(root, f["path"])
                    if re.search(r"\.pt\.trace\.json(\.gz)?$", f["path"]):
                        cap.setdefault("checks", {})[f["path"]] = torch_trace_checks(p)
                    elif f["path"].endswith(".pickle"):
                        cap.setdefault("checks", {})[f["path"]] = snapshot_checks(p)
            except Exception as e:
                cap["checks"] = {"error": "%s: %s" % (type(e).__name__, e)}
            caps.append(cap)
        entry["captures"] = caps
        first = None
        if caps:
            first = dict(caps[0])
            # one file's checks stand for the capture (several traces: summed kernels)
            ch = first.get("checks") or {}
            if "error" not in ch and ch:
                merged = {}
                for v in ch.values():
                    for k, x in v.items():
                        if isinstance(x, int) and not isinstance(x, bool):
                            merged[k] = merged.get(k, 0) + x
                        else:
                            merged.setdefault(k, x)
                first["checks"] = merged
        ok, why = judge(w.get("kind", key), w, gpu, first)
        if ok and len(caps) != 1:
            ok, why = False, "%d captures, 1 expected" % len(caps)
        if ok and w.get("state") not in ("done",):
            why += " (window state %s)" % w.get("state")
        entry["ok"], entry["verdict"] = ok, why
        ok_all &= ok
        summary["windows"][key] = entry
    for part in ("train", "cworker"):
        errs = summary[part].get("errors") or ([summary[part]["missing"]] if "missing" in summary[part] else [])
        if errs:
            summary["errors"] += ["%s: %s" % (part, e.splitlines()[0]) for e in errs]
            ok_all = False
    summary["result"] = "pass" if ok_all else "fail"
    write_json(out, summary)
    print_summary(summary)
    return 0 if ok_all else 1


def print_summary(s):
    print("== summary: %s (%s)" % (s["result"], s["note"]))
    env = s["env"]
    print("   python %s, torch %s (CUDA %s), profd %s" % (
        env.get("python"), env.get("torch"), env.get("torch_cuda"), (env.get("profd") or {}).get("version")))
    steps = (s.get("train") or {}).get("steps") or []
    if steps:
        print("   training steps (s): " + " ".join("%d:%.3f" % (x["step"], x["s"]) for x in steps))
    for key, w in s["windows"].items():
        if w.get("skipped"):
            print("-- %-12s skipped: %s" % (key, w["skipped"]))
            continue
        print("-- %-12s window %s %s (tool %s, steps %s): wait rc %s, state %s -> %s: %s" % (
            key, w.get("id"), w.get("name"), w.get("tool"), w.get("steps"), w.get("wait_rc"), w.get("state"),
            "OK" if w["ok"] else "UNEXPECTED", w.get("verdict")))
        for c in w.get("captures", []):
            print("     capture rank %s %s: %s%s" % (c["rank"], c["role"], c["status"],
                                                 " (%s)" % c["reason"] if c.get("reason") else ""))
            for f in c["files"]:
                print("       %-60s %10d bytes" % (f["path"], f["bytes"]))
            for name, ch in (c.get("checks") or {}).items():
                print("       check %s: %s" % (name, json.dumps(ch, sort_keys=True)[:600]))
    for e in s["errors"]:
        print("!! " + e)


def cmd_dropin(out, window_dir, note):
    """The drop-in window (dropin.sh): a complete capture on each of the two
    ranks, steps 3 and 4, aten events (and CUDA kernels on a GPU) in each
    trace, and exactly 2 Optimizer.step#SGD.step host ranges in each, inside
    the window's step markers."""
    doc = {"result": "fail", "note": note, "captures": [], "errors": []}
    try:
        import torch

        gpu = torch.cuda.is_available()
        doc["torch"] = torch.__version__
        with open(os.path.join(window_dir, "manifest.json")) as f:
            m = json.load(f)
        caps = m.get("captures", [])
        if sorted(c.get("rank") for c in caps) != [0, 1]:
            doc["errors"].append("captures of ranks %s, not [0, 1]" % sorted(c.get("rank") for c in caps))
        for c in caps:
            entry = {k: c.get(k) for k in ("rank", "status", "reason", "first_step", "last_step")}
            traces = [f["path"] for f in c.get("files", []) if ".pt.trace.json" in f["path"]]
            if c.get("status") != "complete" or (c.get("first_step"), c.get("last_step")) != (3, 4) or not traces:
                doc["errors"].append("rank %s: %s steps %s..%s, %d trace(s) (%s)" % (
                    c.get("rank"), c.get("status"), c.get("first_step"), c.get("last_step"), len(traces),
                    c.get("reason")))
            for t in traces:
                ch = torch_trace_checks(os.path.join(window_dir, c["dir"], t))
                events = load_trace(os.path.join(window_dir, c["dir"], t))
                events = events["traceEvents"] if isinstance(events, dict) else events
                # The host's ranges only: with CUDA, Kineto mirrors each
                # record_function range on the GPU's timeline as a
                # "gpu_user_annotation" of the same name (seen on torch
                # 2.11: 2 host + 2 device ranges for a 2-step window).
                ranges = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"
                          and e.get("name") == "Optimizer.step#SGD.step"
                          and e.get("cat") != "gpu_user_annotation"]
                marks = [e for e in events if isinstance(e, dict) and e.get("cat") == "profd" and e.get("ph") == "X"]
                ch["optimizer_steps"] = len(ranges)
                if marks:
                    lo = min(float(e["ts"]) for e in marks)
                    hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in marks)
                    outside = [e for e in ranges if float(e["ts"]) < lo or float(e["ts"]) + float(e.get("dur", 0)) > hi]
                    if outside:
                        doc["errors"].append("rank %s: %d optimizer step range(s) not inside the window's steps "
                                             "(%.1f..%.1f us)" % (c.get("rank"), len(outside), lo, hi))
                entry["checks"] = ch
                if ch["aten_ops"] == 0 or (gpu and ch["kernels"] == 0):
                    doc["errors"].append("rank %s: %d aten ops, %d CUDA kernels" % (
                        c.get("rank"), ch["aten_ops"], ch["kernels"]))
                if ch["optimizer_steps"] != 2:
                    doc["errors"].append("rank %s: %d Optimizer.step#SGD.step ranges, not 2 (a window boundary "
                                         "inside the optimizer step's range)" % (c.get("rank"), ch["optimizer_steps"]))
            doc["captures"].append(entry)
    except Exception as e:
        doc["errors"].append("%s: %s" % (type(e).__name__, e))
    if not doc["errors"]:
        doc["result"] = "pass"
    write_json(out, doc)
    print("dropin: %s %s" % (doc["result"], json.dumps(doc, sort_keys=True)[:3000]))
    return 0 if doc["result"] == "pass" else 1


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "env":
        return cmd_env(args[0])
    if cmd == "train":
        return cmd_train(args[0], args[1], int(args[2]), int(args[3]), int(args[4]))
    if cmd == "cworker":
        return cmd_cworker(args[0], args[1], int(args[2]), int(args[3]))
    if cmd == "report":
        return cmd_report(*args[:6])
    if cmd == "dropin":
        return cmd_dropin(*args[:3])
    print("unknown command %r" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
