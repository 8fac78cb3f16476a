# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Step and phase markers in the traces the Python backends write, and the
file names the usual viewers expect.

While a window runs, libprofd notes every step and phase boundary; when a
capture stops it writes them next to the capture as a small Chrome trace,
profd-markers-p<part>.json (ProfilerStep#N and role.phase ranges, times in
CLOCK_MONOTONIC microseconds, each range's args holding "profd_mono_us"),
just before the backend's stop(). A backend that writes a Chrome trace puts
the markers into it (finish_trace) and removes that file; other backends
leave it as the capture's sidecar.

A trace's own clock is not CLOCK_MONOTONIC (torch.profiler's kineto traces
count from the epoch, the legacy profiler from its start): the backend
records a "profd::sync" range while the profiler records (sync()), and the
markers are moved onto the trace's clock by the difference between that
range's middle and the monotonic time taken inside it: within half the
range's length (tens of microseconds; the range stays in the trace).

File names follow TensorBoard's profiler plugin: <worker>.<ms>.pt.trace.json
[.gz], the worker "rank<R>-<role>[-<phase>]" (libprofd's name for it, in the
markers file), ms the wall clock in milliseconds.
"""

import gzip
import json
import os
import re
import shutil
import time

MARKERS = "profd-markers-p%d.json"
SYNC = "profd::sync"
_CHUNK = 1 << 20


def markers_path(cap):
    return os.path.join(cap.dir, MARKERS % cap.part)


def read_markers(cap):
    """The markers libprofd wrote for this capture's span, or None."""
    try:
        with open(markers_path(cap)) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list) else None


def worker_name(cap, markers=None):
    """rank<R>-<role>[-<phase>]: libprofd's, else from the capture."""
    try:
        w = markers["otherData"]["profd"]["worker"]
        if isinstance(w, str) and re.match(r"^[A-Za-z0-9_-]+$", w):
            return w
    except (KeyError, TypeError):
        pass
    return "rank%d-%s%s" % (cap.rank, cap.role, "-" + cap.phase if cap.phase else "")


def trace_file(directory, worker, gz):
    """A new <worker>.<ms>.pt.trace.json[.gz] path in `directory`."""
    ms = int(time.time() * 1000)
    while True:
        path = os.path.join(directory, "%s.%d.pt.trace.json%s" % (worker, ms, ".gz" if gz else ""))
        if not os.path.exists(path) and not os.path.exists(path + ".part"):
            return path
        ms += 1


def sync(torch):
    """A range the running profiler records, named profd::sync, and the
    CLOCK_MONOTONIC microseconds taken inside it."""
    with torch.profiler.record_function(SYNC):
        return time.monotonic_ns() // 1000


_TS = re.compile(rb'"ts"\s*:\s*(-?[0-9]+(?:\.[0-9]*)?)')
_DUR = re.compile(rb'"dur"\s*:\s*([0-9]+(?:\.[0-9]*)?)')
_PID = re.compile(rb'"pid"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)')


def _sync_event(path):
    """The middle of the profd::sync range of a trace (the monotonic time
    was taken somewhere in it: half its length is the error) and its raw
    pid, read as a stream; None when there is none."""
    needle = b'"' + SYNC.encode() + b'"'
    tail = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                return None
            buf = tail + chunk
            i = buf.find(needle)
            if i >= 0:
                while len(buf) - i < 4096:
                    more = f.read(4096)
                    if not more:
                        break
                    buf += more
                start = buf.rfind(b"{", 0, i)
                end = buf.find(b"}", i)
                # the event's own members: up to its args (nested) or its end
                obj = buf[start if start >= 0 else i : end if end >= 0 else len(buf)]
                ts, dur, pid = _TS.search(obj), _DUR.search(obj), _PID.search(obj)
                if ts is None:
                    return None
                mid = float(ts.group(1)) + (float(dur.group(1)) / 2 if dur else 0.0)
                return mid, (pid.group(1).decode() if pid else None)
            tail = buf[-len(needle) :]


def _insertion(head):
    """Where the first event goes in a trace's first bytes, and whether the
    array is empty; None when it cannot be found there."""
    m = re.match(rb"\s*\[", head)
    if m is None:
        m = re.search(rb'"traceEvents"\s*:\s*\[', head)
    if m is None:
        return None
    rest = head[m.end() :].lstrip()
    return m.end(), rest[:1] == b"]"


def _marker_events(markers, shift, pid, rename_steps):
    out = []
    for e in markers.get("traceEvents", []):
        if not isinstance(e, dict):
            continue
        e = dict(e)
        if "ts" in e:
            e["ts"] = e["ts"] + shift
            if isinstance(e["ts"], float):
                e["ts"] = round(e["ts"], 3)
        if pid is not None:
            e["pid"] = json.loads(pid)
        if rename_steps and str(e.get("name", "")).startswith("ProfilerStep#"):
            e["name"] = "TrainingStep#" + e["name"][len("ProfilerStep#") :]
        out.append(json.dumps(e, separators=(",", ":")))
    return out


def _with_dist_info(head, dist_info):
    """The trace's first bytes with a top-level "distributedInfo" (as Kineto
    writes it: pytorch/kineto@114171dfba6867d2a898634670d9a3197dbb9595
    libkineto/src/output_json.cpp, ChromeTraceLogger::metadataToJSON, of
    the metadata torch.profiler adds, torch/profiler/profiler.py
    _get_distributed_info: backend, rank, world_size), and what the file's
    end needs then. A trace that has one, or whose start is not a trace,
    is left as it is. A bare array becomes {"distributedInfo": ...,
    "traceEvents": [...]}."""
    if dist_info is None or b'"distributedInfo"' in head:
        return head, b""
    info = json.dumps(dist_info, separators=(", ", ": ")).encode()
    m = re.match(rb"\s*\[", head)
    if m is not None:
        return b'{"distributedInfo": ' + info + b', "traceEvents": ' + head, b"}\n"
    m = re.match(rb"\s*\{", head)
    if m is not None:
        return head[: m.end()] + b'\n  "distributedInfo": ' + info + b"," + head[m.end() :], b""
    return head, b""


def dist_info(torch):
    """torch.distributed's backend, rank and world size, as torch.profiler
    records them for Kineto; None when it is not initialized."""
    dist = getattr(torch, "distributed", None)
    try:
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        return {"backend": str(dist.get_backend()), "rank": dist.get_rank(), "world_size": dist.get_world_size()}
    except Exception:
        return None


def finish_trace(raw, final, gz, markers, sync_mono, rename_steps=False, dist=None):
    """Write `final` (gzip-compressed when gz) from the exported trace `raw`
    with the markers at the start of its events, moved onto its clock by
    its profd::sync event, as <final>.part renamed when complete. Without a
    sync event or markers the trace is kept as it is. `dist`: the
    distributedInfo to add when the trace has none (dist_info()). Returns
    whether the markers went in. `raw` is removed."""
    found = _sync_event(raw) if markers and sync_mono is not None else None
    events = []
    if found is not None:
        ts, pid = found
        events = _marker_events(markers, ts - sync_mono, pid, rename_steps)
    tmp = final + ".part"
    opener = (lambda p: gzip.open(p, "wb", compresslevel=6)) if gz else (lambda p: open(p, "wb"))
    try:
        with open(raw, "rb") as fi, opener(tmp) as fo:
            head, tail = _with_dist_info(fi.read(_CHUNK), dist)
            where = _insertion(head) if events else None
            if where is None:
                fo.write(head)
            else:
                at, empty = where
                fo.write(head[:at])
                fo.write(b"\n" + ",\n".join(events).encode() + (b"\n" if empty else b",\n"))
                fo.write(head[at:])
            shutil.copyfileobj(fi, fo, _CHUNK)
            fo.write(tail)
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        try:
            os.unlink(raw)
        except OSError:
            pass
    return where is not None
