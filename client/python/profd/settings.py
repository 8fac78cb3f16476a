# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Tool settings -> profiler arguments, as pure functions.

A window's tool settings arrive as a JSON object with the keys users write in
verl's ``tool_config`` (``contents``, ``level``, ``analysis``, ``export_type``,
``data_simplification``; ``trace_alloc_max_entries``, ``stack_depth`` for
torch_memory) plus profd's own ``gzip``. Nothing here imports a profiler: the
functions return plain values (enum members by name), so they are tested
without torch or torch_npu, and the backends resolve the names.

Invalid settings raise SettingsError with a message fit for the manifest.
"""

CONTENTS = ("cpu", "cuda", "npu", "memory", "shapes", "module", "stack")

# verl's legacy npu_profile.yaml booleans, read as contents entries
LEGACY_FLAGS = {
    "with_cpu": "cpu",
    "with_npu": "npu",
    "with_memory": "memory",
    "record_shapes": "shapes",
    "with_module": "module",
    "with_stack": "stack",
}

# level -> torch_npu.profiler.ProfilerLevel member
NPU_LEVELS = {
    "level_none": "Level_none",
    "level0": "Level0",
    "level1": "Level1",
    "level2": "Level2",
}

# export_type -> torch_npu.profiler.ExportType member
NPU_EXPORT_TYPES = {"text": "Text", "db": "Db"}

DEFAULT_TRACE_ALLOC_MAX_ENTRIES = 100000
DEFAULT_STACK_DEPTH = 32


class SettingsError(ValueError):
    """Tool settings that cannot be applied."""


def flag(settings, key, default):
    """A boolean setting; accepts true/false, 1/0 and their spellings as text."""
    v = settings.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return v.strip().lower() in ("true", "1", "yes")
    raise SettingsError("%s must be true or false, found %r" % (key, v))


def integer(settings, key, default, minimum=0):
    v = settings.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            v = int(v)
        else:
            raise SettingsError("%s must be an integer, found %r" % (key, v))
    if v < minimum:
        raise SettingsError("%s must be >= %d, found %d" % (key, minimum, v))
    return v


def contents(settings, default):
    """The set of contents asked for: the ``contents`` list plus the legacy
    with_* flags that are true; `default` when neither says anything (an
    empty list counts as nothing said, as in verl)."""
    items = settings.get("contents")
    if items is None or items == []:
        got = set()
    elif isinstance(items, str):
        got = {x.strip() for x in items.split(",") if x.strip()}
    elif isinstance(items, (list, tuple)) and all(isinstance(x, str) for x in items):
        got = set(items)
    else:
        raise SettingsError("contents must be a list of names, found %r" % (items,))
    said = bool(got)
    for key, name in LEGACY_FLAGS.items():
        if key in settings:
            said = True
            if flag(settings, key, False):
                got.add(name)
    unknown = sorted(got - set(CONTENTS))
    if unknown:
        raise SettingsError(
            "contents: unknown %s (known: %s)" % (", ".join(repr(u) for u in unknown), ", ".join(CONTENTS))
        )
    return frozenset(got) if said else frozenset(default)


def schedule_args(schedule):
    """torch.profiler.schedule() keyword arguments for a capture's schedule
    (a Schedule or None); None when there is none (active == 0)."""
    if schedule is None or schedule.active <= 0:
        return None
    return {
        "skip_first": schedule.skip_first,
        "wait": schedule.wait,
        "warmup": schedule.warmup,
        "active": schedule.active,
        "repeat": schedule.repeat,
    }


def _content_flags(c):
    """The profile() flags torch and torch_npu share, from the contents c."""
    return {
        "record_shapes": "shapes" in c,
        "profile_memory": "memory" in c,
        "with_stack": "stack" in c,
        "with_modules": "module" in c,
    }


def torch_profile_args(settings, cuda_available):
    """torch.profiler.profile() keyword arguments. Activities are names of
    torch.profiler.ProfilerActivity members: CPU always; CUDA when the
    contents ask for it (they do by default) and CUDA is available."""
    c = contents(settings, ("cpu", "cuda"))
    activities = ["CPU"]
    if "cuda" in c and cuda_available:
        activities.append("CUDA")
    return dict(_content_flags(c), activities=activities)


def npu_profile_args(settings):
    """torch_npu.profiler.profile() arguments by name:
      activities    ProfilerActivity members (CPU for cpu, NPU for npu; both
                    when the contents name neither)
      record_shapes, profile_memory, with_stack, with_modules  from contents
      experimental  _ExperimentalConfig keyword arguments: profiler_level
                    (ProfilerLevel member), and export_type (ExportType
                    member, or a list of them) and data_simplification when set
      analyse       tensorboard_trace_handler's analyse_flag
    Defaults follow verl: contents cpu,npu; level0; analysis on."""
    c = contents(settings, ("cpu", "npu"))
    activities = [a for a, key in (("CPU", "cpu"), ("NPU", "npu")) if key in c] or ["CPU", "NPU"]
    level = settings.get("level", "level0")
    if level is None:
        level = "level0"
    if not isinstance(level, str) or level.lower() not in NPU_LEVELS:
        raise SettingsError("level must be one of %s; found %r" % (", ".join(NPU_LEVELS), level))
    experimental = {"profiler_level": NPU_LEVELS[level.lower()]}
    if settings.get("export_type") is not None:
        et = settings["export_type"]
        names = et if isinstance(et, (list, tuple)) else [et]
        out = []
        for n in names:
            if not isinstance(n, str) or n.lower() not in NPU_EXPORT_TYPES:
                raise SettingsError("export_type must be text or db (or a list of them); found %r" % (et,))
            out.append(NPU_EXPORT_TYPES[n.lower()])
        experimental["export_type"] = out if isinstance(et, (list, tuple)) else out[0]
    if settings.get("data_simplification") is not None:
        experimental["data_simplification"] = flag(settings, "data_simplification", False)
    return dict(_content_flags(c), activities=activities, experimental=experimental,
                analyse=flag(settings, "analysis", True))


def memory_history_args(settings, params):
    """Keyword arguments to start and to stop
    torch.cuda.memory._record_memory_history(), for the installed version
    whose parameter names are `params`:
      torch >= 2.1   enabled="all", context="all", stacks="all", max_entries
      torch 2.0      enabled=True, trace_alloc_max_entries,
                     trace_alloc_record_context=True
      torch 1.13     enabled=True (no entry limit, no stacks: the snapshot
                     holds the allocator state, not a trace)
    ``stack_depth`` is passed only to an API that takes it. Returns
    (start_kwargs, stop_kwargs)."""
    entries = integer(settings, "trace_alloc_max_entries", DEFAULT_TRACE_ALLOC_MAX_ENTRIES, minimum=1)
    depth = integer(settings, "stack_depth", DEFAULT_STACK_DEPTH, minimum=1)
    params = set(params)
    if "max_entries" in params:
        start = {"enabled": "all", "context": "all", "stacks": "all", "max_entries": entries}
        stop = {"enabled": None}
    elif "trace_alloc_max_entries" in params:
        start = {"enabled": True, "trace_alloc_max_entries": entries}
        if "trace_alloc_record_context" in params:
            start["trace_alloc_record_context"] = True
        stop = {"enabled": False}
    else:
        start = {"enabled": True}
        stop = {"enabled": False}
    if "stack_depth" in params:
        start["stack_depth"] = depth
    return start, stop


def trace_name(part, cycle=None, gzip=False):
    """Chrome trace file of one recorded span: trace-p<part>[-c<cycle>]
    .pt.trace.json[.gz] (TensorBoard's profiler plugin reads *.pt.trace.json)."""
    base = "trace-p%d" % part if cycle is None else "trace-p%d-c%d" % (part, cycle)
    return base + ".pt.trace.json" + (".gz" if gzip else "")
