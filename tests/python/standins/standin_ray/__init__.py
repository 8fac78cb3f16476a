# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A Ray-free stand-in for the part of Ray's API that verl's single controller uses.

Not a framework stand-in of its own: the verl stand-in imports this module as
`ray`, so its code reads like verl's (`ray.remote(cls)`,
`cls.options(runtime_env=...).remote(...)`, `handle.method.remote(...)`,
`ray.get(refs)`, `handle.__ray_call__.remote(fn, ...)`). Each actor is one
Python process started with `python -m standin_ray._worker`; its environment
is built the way Ray builds a worker's on a cluster started by the driver's
ray.init():

  the driver's environment at ray.init() (the raylet's, which workers inherit)
  + runtime_env["env_vars"] given to ray.init()          (job level)
  + the env_vars of the actor that creates this one       (inherited)
  + the env_vars given in .options(runtime_env=...)       (this actor)

later entries winning. What an actor's own code writes into os.environ does
not reach the actors it creates (as on Ray). Method calls to one actor run
one at a time, in the order they were sent, on the actor process's main
thread; a coroutine method runs to completion on one event loop kept by the
actor (a sync actor in Ray terms; an async actor runs every method on its
one event-loop thread, so thread identity is the same). Functions given to
__ray_call__ must be importable by name (module-level), since calls are
pickled by reference (Ray uses cloudpickle).

Differences worth knowing: no scheduling, placement groups, resources or
object store; all "nodes" are this host; a call's exception is raised again
by ray.get() as ActorError with the remote traceback in its message.
"""

import atexit
import json
import os
import pickle
import socket
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection

_SESSION_ENV = "STANDIN_RAY_SESSION"  # path of the session file (raylet env + job env_vars)
_ACTOR_ENV = "STANDIN_RAY_ACTOR_ENV"  # json: the env_vars of the actor running this process

_session = None  # {"base_env": {...}, "job_env_vars": {...}, "path": ...}
_actors = []


class ActorError(RuntimeError):
    """A method call failed in the actor (or the actor process died)."""


class ActorDiedError(ActorError):
    pass


def _load_session():
    global _session
    if _session is None:
        path = os.environ.get(_SESSION_ENV)
        if path and os.path.exists(path):
            with open(path) as f:
                _session = json.load(f)
            _session["owner"] = False
    return _session


def is_initialized():
    return _load_session() is not None


def init(address=None, runtime_env=None, ignore_reinit_error=True, **kwargs):
    """Start a session: snapshot the environment workers inherit, keep the
    job-level runtime_env env_vars. In an actor process (a session exists)
    this is a no-op, as ray.init() is inside a Ray worker."""
    global _session
    if is_initialized():
        return
    env_vars = dict((runtime_env or {}).get("env_vars") or {})
    fd, path = tempfile.mkstemp(prefix="standin-ray-", suffix=".json")
    data = {"base_env": dict(os.environ), "job_env_vars": {k: str(v) for k, v in env_vars.items()}}
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    data["path"] = path
    data["owner"] = True
    _session = data
    os.environ[_SESSION_ENV] = path


def shutdown():
    global _session
    for a in list(_actors):
        a._terminate()
    del _actors[:]
    if _session is not None and _session.get("owner"):
        try:
            os.unlink(_session["path"])
        except OSError:
            pass
        os.environ.pop(_SESSION_ENV, None)
    _session = None


atexit.register(shutdown)


def _worker_env(actor_env_vars):
    s = _load_session()
    if s is None:
        init()
        s = _session
    env = dict(s["base_env"])
    env.update(s["job_env_vars"])
    inherited = json.loads(os.environ.get(_ACTOR_ENV) or "{}")
    own = dict(inherited)
    own.update({k: str(v) for k, v in (actor_env_vars or {}).items()})
    env.update(own)
    env[_SESSION_ENV] = s["path"] if "path" in s else os.environ[_SESSION_ENV]
    env[_ACTOR_ENV] = json.dumps(own)
    return env


class ObjectRef:
    __slots__ = ("_actor", "_seq")

    def __init__(self, actor, seq):
        self._actor = actor
        self._seq = seq


def get(refs, timeout=None):
    if isinstance(refs, ObjectRef):
        return refs._actor._result(refs._seq)
    if isinstance(refs, (list, tuple)):
        return [get(r) for r in refs]
    return refs


def kill(handle, no_restart=True):
    handle._terminate()


class _Method:
    __slots__ = ("_actor", "_name")

    def __init__(self, actor, name):
        self._actor = actor
        self._name = name

    def remote(self, *args, **kwargs):
        if self._name == "__ray_call__":
            fn, rest = args[0], args[1:]
            return self._actor._send(("ray_call", fn, rest, kwargs))
        return self._actor._send(("call", self._name, args, kwargs))


class ActorHandle:
    def __init__(self, cls, args, kwargs, options):
        self._cls_name = cls.__name__
        env_vars = ((options.get("runtime_env") or {}).get("env_vars")) or {}
        env = _worker_env(env_vars)
        parent, child = socket.socketpair()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "standin_ray._worker", str(child.fileno())],
            env=env,
            pass_fds=(child.fileno(),),
        )
        child.close()
        self._sock = parent
        self._conn = Connection(os.dup(parent.fileno()))
        self._seq = 0
        self._done = {}
        self._next_reply = 0
        self._dead = None
        self.actor_name = options.get("name")
        _actors.append(self)
        module = cls.__module__
        if module == "__main__":  # started with -m: import it under its own name in the actor
            spec = getattr(sys.modules["__main__"], "__spec__", None)
            module = spec.name if spec is not None else module
        self._send(("create", module, cls.__qualname__, args, kwargs))

    def __getattr__(self, name):
        if name.startswith("_") and name != "__ray_call__":
            raise AttributeError(name)
        return _Method(self, name)

    @property
    def __ray_call__(self):
        return _Method(self, "__ray_call__")

    @property
    def pid(self):
        return self._proc.pid

    def _send(self, msg):
        seq = self._seq
        self._seq += 1
        if self._dead is None:
            try:
                self._conn.send_bytes(pickle.dumps(msg))
            except OSError as e:
                self._dead = "actor %s (pid %d) is gone: %s" % (self._cls_name, self._proc.pid, e)
        return ObjectRef(self, seq)

    def _result(self, seq):
        while seq not in self._done and self._dead is None:
            try:
                reply = pickle.loads(self._conn.recv_bytes())
            except (EOFError, OSError):
                rc = self._proc.wait()
                self._dead = "actor %s (pid %d) exited with status %s" % (self._cls_name, self._proc.pid, rc)
                break
            self._done[self._next_reply] = reply
            self._next_reply += 1
        if seq not in self._done:
            raise ActorDiedError(self._dead)
        reply = self._done.pop(seq)
        if reply[0] == "ok":
            return reply[1]
        raise ActorError("%s in actor %s (pid %d):\n%s" % (reply[1], self._cls_name, self._proc.pid, reply[2]))

    def _terminate(self):
        if self._proc.poll() is None:
            try:
                self._conn.send_bytes(pickle.dumps(("exit",)))
            except OSError:
                pass
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for c in (self._conn, self._sock):
            try:
                c.close()
            except OSError:
                pass
        if self in _actors:
            _actors.remove(self)


class ActorClass:
    def __init__(self, cls, options=None):
        self.__ray_actor_class__ = cls
        self._options = dict(options or {})

    def options(self, **options):
        merged = dict(self._options)
        merged.update(options)
        return ActorClass(self.__ray_actor_class__, merged)

    def remote(self, *args, **kwargs):
        return ActorHandle(self.__ray_actor_class__, args, kwargs, self._options)

    @property
    def __name__(self):
        return "ActorClass(%s)" % self.__ray_actor_class__.__name__


def remote(*args, **kwargs):
    """@ray.remote, @ray.remote(...) and ray.remote(cls); options are kept."""
    if len(args) == 1 and not kwargs and isinstance(args[0], type):
        return ActorClass(args[0])

    def wrap(cls):
        return ActorClass(cls, kwargs)

    return wrap


class _RuntimeContext:
    def get_job_id(self):
        return "01000000"

    def get_node_id(self):
        return "node-" + socket.gethostname()

    def get_accelerator_ids(self):
        return {"GPU": []}


def get_runtime_context():
    return _RuntimeContext()


class util:  # noqa: N801 - stands in for the ray.util module
    @staticmethod
    def get_node_ip_address():
        return "127.0.0.1"
