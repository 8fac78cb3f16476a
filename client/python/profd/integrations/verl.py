# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""verl: profile a verl job with no change to its code or configuration.

Switch it on with an environment variable Ray passes to every worker:

    VERL_USE_EXTERNAL_MODULES=profd.integrations.verl python3 -m verl.trainer.main_ppo ...

(verl >= 0.6 imports the modules it names in every process that imports
verl), or PROFD_VERL=1 / PROFD_AUTO=1 through the profd-auto.pth file
(any verl version). With neither, the integration also switches itself on
where verl's configuration says `global_profiler.tool: profd` (verl accepts
any tool name and leaves its own profilers off for it). PROFD_VERL=0 turns
it off.

Follows verl-project/verl at 1dda039b9c6311889a9c9a26040677e1254814f9 (the
V1 PPOTrainer and the legacy RayPPOTrainer loops, engine_workers,
DistProfiler, the vLLM and SGLang HTTP servers); the method names of
verl <= 0.7 (fsdp_workers / megatron_workers) are mapped too.

What it does, per process (post-import hooks: it imports nothing of verl):

- driver (the TaskRunner running the trainer): PPOTrainer._start_profiling /
  _stop_profiling (RayPPOTrainer's in the legacy loop) run at every step,
  whether or not verl profiles it; around them every distinct worker and
  rollout-server process hears step_begin(global_steps) / step_end through
  Ray's __ray_call__ (worker groups sharing processes -- the hybrid engine,
  ref_policy_wg is actor_rollout_wg, a colocated critic -- are told once).
  Steps are verl's global_steps (from 1).
- workers: one client per process. ActorRolloutRefWorker declares the roles
  it hosts (actor_rollout_ref: actor, rollout, ref), TrainingWorker of a
  value model the critic, each at the worker group's RANK (verl numbers
  every worker group from 0: the critic's rank 0 is not the actor's).
  @DistProfiler.annotate(role=<stage>) becomes a profd phase under verl's
  stage name (STAGES); the critic's TrainingWorker.infer_batch and
  train_mini_batch become compute_values and critic_update; one
  DistProfiler.step() (an update mini-batch) is one sub-step.
- rollout servers (vLLMHttpServer, SGLangHttpServer): role rollout with its
  replica rank; each step is one `generate` phase (requests are batched by
  the engine: there is no finer boundary without patching it).
  The model runs in the engine's own worker processes: for each capture
  of a server process the engine's own profiler is driven over it and its
  workers' traces are filed into the capture (engines.py).
- verl's own profiler (global_profiler.tool torch/npu/nsys/...) keeps
  working, except on the steps a profd window covers in that process:
  there DistProfiler.start/stop/step leave verl's backend off (one log
  line), so the two never run on one thread.

A verl whose classes or methods are not as expected gets one log line and
no patch in that module.
"""

import functools
import inspect
import os
import sys

from .. import _hooks
from . import _common as C
from . import engines as E

VERL_COMMIT = "1dda039b9c6311889a9c9a26040677e1254814f9"

# verl's annotated stages (DistProfiler.annotate(role=...)) -> (profd role,
# phase); None: a sub-step of the enclosing stage, not a phase.
STAGES = {
    "actor_compute_log_prob": ("actor", "actor_compute_log_prob"),
    "ref_compute_log_prob": ("ref", "ref_compute_log_prob"),
    "actor_update": ("actor", "actor_update"),
    "train_batch": None,
    # verl <= 0.7 (fsdp_workers, megatron_workers)
    "rollout_generate": ("rollout", "rollout_generate"),
    "compute_values": ("critic", "compute_values"),
    "critic_update": ("critic", "critic_update"),
    "compute_rm_score": ("reward", "compute_rm_score"),
}
# the role of a stage verl may add, by its name's start
_PREFIXES = (("actor_", "actor"), ("ref_", "ref"), ("critic_", "critic"), ("rollout_", "rollout"),
             ("reward_", "reward"))
# ActorRolloutRefWorker(role=...) -> the roles the process hosts
_HYBRID = {
    "actor_rollout_ref": ("actor", "rollout", "ref"),
    "actor_rollout": ("actor", "rollout"),
    "actor": ("actor",),
    "rollout": ("rollout",),
    "ref": ("ref",),
}
GENERATE = "generate"


class _Proc:
    """This process as the integration sees it."""

    server = False  # a rollout server: each step is one generate phase
    depth = 0  # annotated stages running (phases do not nest)
    tool_profd = False  # verl's configuration says global_profiler.tool: profd


_proc = _Proc()


def _named():
    mods = os.environ.get("VERL_USE_EXTERNAL_MODULES", "")
    return __name__ in [m.strip() for m in mods.split(",")]


def enabled(tool=None):
    """Switched on in this process (tool: a verl profiler tool name seen)."""
    if tool == "profd":
        _proc.tool_profd = True
    if C.off("PROFD_VERL"):
        return False
    return C.flag("PROFD_VERL") or C.flag("PROFD_AUTO") or _named() or _proc.tool_profd


def _version():
    return getattr(sys.modules.get("verl"), "__version__", "?")


def _refuse(module, missing):
    C.say_once(("verl", module), "verl %s: %s has no %s (profd.integrations.verl follows verl@%s): "
               "profd leaves it alone", _version(), module, missing, VERL_COMMIT[:8])


def _params(fn):
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


def _required(fn):
    """The names of fn's parameters without a default, or None."""
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in ps if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _check(module, cls, methods, exact=False):
    """cls has every method as {name: leading parameter names} (exact: its
    parameters without a default are those); else the module is refused (one
    log line) and False."""
    if cls is None:
        _refuse(module.__name__, "expected class")
        return False
    for name, want in methods.items():
        fn = getattr(cls, name, None)
        got = (_required(fn) if exact else _params(fn)) if fn is not None else None
        if got is None or (got != list(want) if exact else got[: len(want)] != list(want)):
            _refuse(module.__name__, "%s.%s(%s)" % (cls.__name__, name, ", ".join(want)))
            return False
    return True


# ---- workers: roles, phases, sub-steps ----


def _declare(roles, rank, replica_rank=None, server=False):
    """This process hosts `roles` at `rank`: the client opens at the first
    role, later ones are added."""
    c = C.current()
    if c is None:
        if not C.claim("verl"):
            return None
        kw = {"role": roles[0], "rank": rank, "roles": {r: rank for r in roles[1:]}}
        if replica_rank is not None:
            kw["replica_rank"] = replica_rank
        c = C.client(**kw)
    else:
        for r in roles:
            c.add_role(r, rank)
    if server:
        _proc.server = True
    return c


def _stage(stage):
    """verl stage name -> (role, phase), or None for a sub-step stage."""
    if stage in STAGES:
        return STAGES[stage]
    for prefix, role in _PREFIXES:
        if stage.startswith(prefix):
            return role, stage
    return None, stage  # the process's primary role


def _in_phase(role, phase, fn, *args, **kwargs):
    c = C.current()
    if c is None or _proc.depth:
        return fn(*args, **kwargs)
    _proc.depth += 1
    try:
        with c.phase(phase, role=role):
            return fn(*args, **kwargs)
    finally:
        _proc.depth -= 1


def _patch_profile(module):
    """DistProfiler: start(**kwargs), stop() and annotate() in every verl
    this follows; step() (one update mini-batch) and check_enable() /
    check_this_rank() only after v0.7.0 (verl-project/verl cd1926ce, "verl
    profiler system support Agent Loop"): without them there is no sub-step,
    and on a step a profd window covers verl's own start() / stop() are left
    out whether or not verl selected the rank (its backend would have been a
    no-op where it did not)."""
    cls = getattr(module, "DistProfiler", None)
    if not _check(module, cls, {"start": ("self",), "stop": ("self",)}) or not hasattr(cls, "annotate"):
        if cls is not None and not hasattr(cls, "annotate"):
            _refuse(module.__name__, "DistProfiler.annotate")
        return
    has_step = callable(getattr(cls, "step", None))
    has_checks = callable(getattr(cls, "check_enable", None)) and callable(getattr(cls, "check_this_rank", None))
    if hasattr(sys.modules.get("verl.workers.engine_workers"), "ActorRolloutRefWorker"):
        C.say_once("verl-late", "verl's workers were imported before profd's verl integration: their "
                   "stages are not profd phases (load it with VERL_USE_EXTERNAL_MODULES)")
    orig_annotate = cls.annotate
    orig_init, orig_start, orig_stop = cls.__init__, cls.start, cls.stop
    orig_step = cls.step if has_step else None

    def annotate(klass, message=None, color=None, domain=None, category=None, **kwargs_outer):
        verl_decorator = orig_annotate.__func__(klass, message, color, domain, category, **kwargs_outer)
        stage = kwargs_outer.get("role") or message

        def decorator(func):
            verl_wrapped = verl_decorator(func)
            mapped = _stage(stage) if isinstance(stage, str) else None
            if mapped is None:
                return verl_wrapped  # a sub-step stage (train_batch): no phase

            @functools.wraps(func)
            def wrapper(self_instance, *args, **kwargs):
                return _in_phase(mapped[0], mapped[1], verl_wrapped, self_instance, *args, **kwargs)

            return wrapper

        return decorator

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        enabled(getattr(getattr(self, "config", None), "tool", None) or getattr(self, "_tool", None))

    def _covered(self):
        """A profd window covers this step in this process."""
        c = C.current()
        return c is not None and c.busy

    @functools.wraps(orig_start)
    def start(self, **kwargs):
        if _covered(self) and (not has_checks or (self.check_enable() and self.check_this_rank())):
            self._profd_skipped = True
            C.say_once("verl-own", "profd: verl's own profiler (%s) stays off on the steps a profd window "
                       "covers in this process", getattr(self, "_tool", None) or "?")
            return None
        self._profd_skipped = False
        return orig_start(self, **kwargs)

    @functools.wraps(orig_stop)
    def stop(self, *args, **kwargs):
        if getattr(self, "_profd_skipped", False):
            self._profd_skipped = False
            return None
        return orig_stop(self, *args, **kwargs)

    @functools.wraps(orig_step)
    def step(self):
        c = C.current()
        if c is not None:
            c.substep()  # one update mini-batch
        if getattr(self, "_profd_skipped", False):
            return None
        return orig_step(self)

    cls.annotate = classmethod(annotate)
    cls.__init__, cls.start, cls.stop = __init__, start, stop
    if has_step:
        cls.step = step


def _profiler_tool(worker):
    return getattr(getattr(getattr(worker, "profiler", None), "config", None), "tool", None)


def _wrap_init(cls, after):
    orig = cls.__init__

    @functools.wraps(orig)
    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            after(self)
        except Exception as e:  # never break the worker
            C.say_once(("verl-init", cls.__name__), "profd: %s: roles not declared: %s: %s", cls.__name__,
                       type(e).__name__, e)

    cls.__init__ = __init__


def _hybrid_roles(worker):
    role = getattr(worker, "role", None)
    roles = _HYBRID.get(role)
    if roles is None:
        flags = (("actor", "_is_actor"), ("rollout", "_is_rollout"), ("ref", "_is_ref"))
        roles = tuple(r for r, attr in flags if getattr(worker, attr, False))
    return roles


def _hybrid_after_init(worker):
    if enabled(_profiler_tool(worker)):
        roles = _hybrid_roles(worker)
        if roles:
            _declare(list(roles), int(worker.rank))


def _critic_after_init(worker):
    cfg = getattr(worker, "config", None)
    if getattr(cfg, "model_type", None) == "value_model" and enabled(_profiler_tool(worker)):
        _declare(["critic"], int(worker.rank))


def _critic_phase(cls, name, phase):
    orig = getattr(cls, name)

    @functools.wraps(orig)
    def method(self, *args, **kwargs):
        if getattr(getattr(self, "config", None), "model_type", None) != "value_model":
            return orig(self, *args, **kwargs)
        return _in_phase("critic", phase, orig, self, *args, **kwargs)

    setattr(cls, name, method)


def _patch_engine_workers(module):
    hybrid = getattr(module, "ActorRolloutRefWorker", None)
    training = getattr(module, "TrainingWorker", None)
    if not (_check(module, hybrid, {"__init__": ("self", "config", "role")})
            and _check(module, training, {"__init__": ("self", "config"), "infer_batch": ("self", "data"),
                                          "train_mini_batch": ("self", "data")})):
        return
    _wrap_init(hybrid, _hybrid_after_init)
    _wrap_init(training, _critic_after_init)
    _critic_phase(training, "infer_batch", "compute_values")
    _critic_phase(training, "train_mini_batch", "critic_update")


def _patch_legacy_workers(module):
    """verl <= 0.7: fsdp_workers / megatron_workers (their stages are
    annotated: compute_values, critic_update, rollout_generate, ...)."""
    hybrid = getattr(module, "ActorRolloutRefWorker", None)
    if hybrid is not None and _check(module, hybrid, {"__init__": ("self", "config", "role")}):
        _wrap_init(hybrid, _hybrid_after_init)
    for name, role in (("CriticWorker", "critic"), ("RewardModelWorker", "reward")):
        cls = getattr(module, name, None)
        if cls is not None and _check(module, cls, {"__init__": ("self", "config")}):
            _wrap_init(cls, functools.partial(_single_after_init, role))


def _single_after_init(role, worker):
    if enabled(_profiler_tool(worker)):
        _declare([role], int(worker.rank))


def _server_after_init(server):
    cfg = getattr(server, "config", None)
    tool = getattr(getattr(cfg, "profiler", None), "tool", None) if cfg is not None else None
    if not enabled(tool if isinstance(tool, str) else None):
        return
    replica = int(server.replica_rank)
    ws = 1
    for key in ("tensor_model_parallel_size", "data_parallel_size", "pipeline_model_parallel_size"):
        ws *= int(getattr(cfg, key, 1) or 1)
    nnodes = max(1, int(getattr(server, "nnodes", 1) or 1))
    # the hybrid rank of the first device it serves: replica r spans ranks [ws*r, ws*(r+1))
    rank = replica * ws + int(getattr(server, "node_rank", 0) or 0) * max(1, ws // nnodes)
    c = _declare(["rollout"], rank, replica_rank=replica, server=True)
    # verl drives the engine's profiler from the replica's node-0 server only
    if c is not None and not C.off("PROFD_VERL_ENGINE") and int(getattr(server, "node_rank", 0) or 0) == 0:
        kind = "sglang" if type(server).__name__.startswith("SGLang") else "vllm"
        server._profd_engine = E.attach(c, kind, server, replica)


async def _profd_engine(self, what):
    """Added to the rollout server classes: the engine's own profiler
    started / stopped for this process's capture (on the server's event
    loop, as verl's start_profile runs)."""
    eng = getattr(self, "_profd_engine", None)
    if eng is None:
        return None
    return await (eng.start() if what == "start" else eng.stop())


def _keep_verl_engine_profile_off(cls, name):
    """verl's own start_profile / stop_profile of the server leave the
    engine alone while a profd capture drives it."""
    orig = getattr(cls, name)

    @functools.wraps(orig)
    async def method(self, *args, **kwargs):
        eng = getattr(self, "_profd_engine", None)
        if eng is not None and eng.cap is not None:
            C.say_once("verl-engine-own", "profd: verl's rollout profiling (%s) stays off on the steps a profd "
                       "window drives the engine", name)
            return None
        return await orig(self, *args, **kwargs)

    setattr(cls, name, method)


def _patch_server(cls_name, module):
    cls = getattr(module, cls_name, None)
    if not _check(module, cls, {"__init__": ("self", "config", "model_config", "rollout_mode", "workers",
                                             "replica_rank", "node_rank")}):
        return
    _wrap_init(cls, _server_after_init)
    cls.profd_engine = _profd_engine
    for name in ("start_profile", "stop_profile"):
        if inspect.iscoroutinefunction(getattr(cls, name, None)):
            _keep_verl_engine_profile_off(cls, name)
    if cls_name == "vLLMHttpServer":
        if inspect.iscoroutinefunction(getattr(cls, "launch_server", None)):
            E.wrap_launch(cls)
        else:
            _refuse(module.__name__, "async vLLMHttpServer.launch_server")


# ---- driver: steps for every process ----


def _on_process(instance, what, step):
    """Run in a worker or server process through __ray_call__."""
    c = C.current()
    if c is None:
        return None
    if what == "begin":
        c.step_begin(step)
        if _proc.server:
            c.phase_begin(GENERATE, role="rollout")
            eng = getattr(instance, "_profd_engine", None)
            return eng is not None and eng.wants_start()
    else:
        if _proc.server:
            c.phase_end()
        c.step_end(step)
    return None


def _handles(trainer):
    """Every distinct worker and rollout-server actor of the trainer."""
    out, seen = [], set()

    def add(h):
        key = getattr(h, "_actor_id", None) or id(h)
        if key not in seen:
            seen.add(key)
            out.append(h)

    for name, value in sorted(vars(trainer).items()):
        if name.endswith("_wg"):
            for h in getattr(value, "workers", None) or ():
                add(h)
    managers = trainer._rollout_server_managers() if hasattr(trainer, "_rollout_server_managers") else [
        getattr(trainer, "llm_server_manager", None)]
    for m in managers:
        for replica in getattr(m, "rollout_replicas", None) or ():
            for h in getattr(replica, "servers", None) or ():
                add(h)
    return out


def _relay(trainer, what):
    cfg = getattr(getattr(trainer, "config", None), "global_profiler", None)
    tool = cfg.get("tool") if hasattr(cfg, "get") else getattr(cfg, "tool", None)
    if not enabled(tool):
        return
    base = sys.modules.get("verl.single_controller.ray.base")
    ray = getattr(base, "ray", None)
    if ray is None:
        C.say_once("verl-ray", "profd: verl.single_controller.ray.base.ray not found: steps not relayed")
        return
    step = int(trainer.global_steps)
    handles = _handles(trainer)
    try:
        if what == "end":
            engines, trainer._profd_engines = getattr(trainer, "_profd_engines", []), []
            if engines:  # the engines' traces are written before the captures end
                ray.get([h.profd_engine.remote("stop") for h in engines])
        got = ray.get([h.__ray_call__.remote(_on_process, what, step) for h in handles])
        if what == "begin":
            trainer._profd_engines = [h for h, start in zip(handles, got) if start is True]
            if trainer._profd_engines:
                ray.get([h.profd_engine.remote("start") for h in trainer._profd_engines])
    except Exception as e:  # a worker without profd, or gone: verl sees its own errors
        C.say_once("verl-relay", "profd: step %s not relayed to every worker: %s: %s", what, type(e).__name__, e)


def _patch_trainer(module, cls_name, start_params, stop_params):
    cls = getattr(module, cls_name, None)
    if not _check(module, cls, {"_start_profiling": start_params, "_stop_profiling": stop_params}, exact=True):
        return
    orig_start, orig_stop = cls._start_profiling, cls._stop_profiling

    @functools.wraps(orig_start)
    def _start_profiling(self, *args, **kwargs):
        _relay(self, "begin")
        return orig_start(self, *args, **kwargs)

    @functools.wraps(orig_stop)
    def _stop_profiling(self, *args, **kwargs):
        try:
            return orig_stop(self, *args, **kwargs)
        finally:
            _relay(self, "end")

    cls._start_profiling, cls._stop_profiling = _start_profiling, _stop_profiling


def install():
    if C.off("PROFD_VERL"):
        return
    when = _hooks.when_imported
    when("verl.utils.profiler.profile", _patch_profile)
    when("verl.workers.engine_workers", _patch_engine_workers)
    when("verl.workers.fsdp_workers", _patch_legacy_workers)
    when("verl.workers.megatron_workers", _patch_legacy_workers)
    when("verl.workers.rollout.vllm_rollout.vllm_async_server", functools.partial(_patch_server, "vLLMHttpServer"))
    when("verl.workers.rollout.sglang_rollout.async_sglang_server",
         functools.partial(_patch_server, "SGLangHttpServer"))
    when("verl.trainer.ppo.v1.trainer_base",
         functools.partial(_patch_trainer, cls_name="PPOTrainer", start_params=("self",), stop_params=("self",)))
    when("verl.trainer.ppo.ray_trainer",
         functools.partial(_patch_trainer, cls_name="RayPPOTrainer", start_params=("self", "do_profile"),
                           stop_params=("self", "do_profile")))
    # inside verl, verl's steps win over PROFD_AUTO's optimizer steps (verl
    # steps an optimizer once per update mini-batch)
    when("verl", lambda module: enabled() and C.claim("verl"))


C.install("verl", "verl", install)
