# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/single_controller/ray/base.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Ray worker groups. Each worker is one actor process (standin_ray stands
in for Ray); _create_worker passes every worker the environment verl gives it
through runtime_env (WORLD_SIZE, RANK, WG_PREFIX, WG_BACKEND, RAY_LOCAL_WORLD_SIZE,
MASTER_ADDR, MASTER_PORT), RANK counting from 0 in each worker group.

Roles sharing a resource pool are colocated in one process: the pool's
actor is a WorkerDict holding one instance per role, and spawn() gives each
role a worker group over the same processes (verl's hybrid engine:
actor_rollout_ref, and the critic too when it shares the pool).

`ray` below is the module the worker groups use; an integration can reach
actors through it (`base.ray.get(h.__ray_call__.remote(fn))`) with the real
Ray and with this stand-in alike."""

import random
import socket
import string

import standin_ray as ray  # stands in for: import ray

from verl.protocol import DataProtoFuture
from verl.single_controller.base import ClassWithInitArgs, ResourcePool, Worker, WorkerGroup
from verl.single_controller.base.decorator import MAGIC_ATTR


def get_random_string(length: int) -> str:
    letters_digits = string.ascii_letters + string.digits
    return "".join(random.choice(letters_digits) for _ in range(length))


def func_generator(self, method_name, dispatch_fn, collect_fn, execute_fn, blocking):
    target = self._prefixed(method_name)  # "<role>_<method>" on a colocated actor

    class Functor:
        def __call__(this, *args, **kwargs):
            args, kwargs = dispatch_fn(self, *args, **kwargs)
            output = self.execute_all_async_split(target, args, kwargs)
            if blocking:
                return collect_fn(self, ray.get(output))
            return DataProtoFuture(lambda outs: collect_fn(self, outs), output)

    return type(method_name, (Functor,), {})()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


class RayResourcePool(ResourcePool):
    def __init__(self, process_on_nodes=None, use_gpu: bool = True, name_prefix: str = None,
                 max_colocate_count: int = 10, detached=False, accelerator_type=None) -> None:
        super().__init__(process_on_nodes, max_colocate_count)
        self.use_gpu = use_gpu
        self.name_prefix = get_random_string(length=6) if name_prefix is None else name_prefix


class ResourcePoolManager:
    """resource_pool_spec: pool name -> processes per node; mapping: Role -> pool name."""

    def __init__(self, resource_pool_spec: dict, mapping: dict):
        self.resource_pool_spec = resource_pool_spec
        self.mapping = mapping
        self.resource_pool_dict = {}

    def create_resource_pool(self):
        for name, process_on_nodes in self.resource_pool_spec.items():
            self.resource_pool_dict[name] = RayResourcePool(process_on_nodes=process_on_nodes, use_gpu=True,
                                                            max_colocate_count=3, name_prefix=name)

    def get_resource_pool(self, role) -> RayResourcePool:
        return self.resource_pool_dict[self.mapping[role]]

    def get_n_gpus(self) -> int:
        return sum(n for nodes in self.resource_pool_spec.values() for n in nodes)


class RayClassWithInitArgs(ClassWithInitArgs):
    def __init__(self, cls, *args, **kwargs) -> None:
        super().__init__(cls, *args, **kwargs)
        self._options = {}
        self._additional_resource = {}
        self.class_dict = None  # set by create_colocated_worker_cls: role -> (class, args, kwargs)

    def update_options(self, options: dict):
        self._options.update(options)

    def __call__(self, placement_group=None, placement_group_bundle_idx=None, use_gpu=True, num_gpus=1,
                 sharing_with=None, device_name="cuda"):
        return self.cls.options(**self._options).remote(*self.args, **self.kwargs)


class RayWorkerGroup(WorkerGroup):
    def __init__(self, resource_pool: RayResourcePool = None, ray_cls_with_init: RayClassWithInitArgs = None,
                 bin_pack: bool = True, name_prefix: str = None, detached=False, worker_names=None,
                 worker_handles=None, ray_wait_register_center_timeout: int = 300, **kwargs) -> None:
        self._master_addr = kwargs.pop("master_addr", None)
        self._master_port = kwargs.pop("master_port", None)
        super().__init__(resource_pool=resource_pool, **kwargs)
        self.ray_cls_with_init = ray_cls_with_init
        self.name_prefix = get_random_string(length=6) if name_prefix is None else name_prefix
        self.sub_cls_name = ""
        self.device_name = kwargs.get("device_name", "cuda")
        self.profile_steps = kwargs.get("profile_steps", None)
        self.worker_nsight_options = kwargs.get("worker_nsight_options", None)
        self.customized_worker_env = kwargs.get("worker_env", {})
        if worker_handles is not None:
            self._workers = list(worker_handles)
            self._worker_names = list(worker_names or [])
        else:
            self._init_with_resource_pool(resource_pool=resource_pool, ray_cls_with_init=ray_cls_with_init,
                                          bin_pack=bin_pack, detached=detached, worker_env=self.customized_worker_env)
        if ray_cls_with_init is not None and worker_handles is None and not ray_cls_with_init.class_dict:
            self._bind_worker_method(_unwrap_ray_remote(ray_cls_with_init.cls), func_generator)
        self.wg_dict = None
        self.method_names = []

    def _prefixed(self, method_name):
        return self.sub_cls_name + "_" + method_name if self.sub_cls_name else method_name

    def _init_with_resource_pool(self, resource_pool, ray_cls_with_init, bin_pack, detached, worker_env=None):
        self.resource_pool = resource_pool
        world_size = resource_pool.world_size
        self._world_size = world_size
        rank = -1
        for pg_idx, local_world_size in enumerate(resource_pool.store):
            if pg_idx == 0:
                self._master_addr, self._master_port = "127.0.0.1", _free_port()
            for local_rank in range(local_world_size):
                rank += 1
                self._create_worker(rank=rank, pg_idx=pg_idx, pg=None, local_rank=local_rank,
                                    resource_pool=resource_pool, ray_cls_with_init=ray_cls_with_init,
                                    worker_env=worker_env, detached=detached)

    def _create_worker(self, rank, pg_idx, pg, local_rank, resource_pool, ray_cls_with_init, worker_env, detached):
        world_size = resource_pool.world_size
        local_world_size = resource_pool.store[0]
        env_vars = {
            "WORLD_SIZE": str(world_size),
            "RANK": str(rank),
            "WG_PREFIX": self.name_prefix,
            "WG_BACKEND": "ray",
            "RAY_LOCAL_WORLD_SIZE": str(local_world_size),
            "MASTER_ADDR": self._master_addr,
            "MASTER_PORT": self._master_port,
        }
        if worker_env:
            conflict = set(env_vars) & set(worker_env)
            if conflict:
                raise ValueError(f"Cannot override protected system env: {conflict}")
            env_vars.update(worker_env)
        cia_name = getattr(ray_cls_with_init.cls, "__ray_actor_class__", ray_cls_with_init.cls).__name__
        name = f"{self.name_prefix}{cia_name}_{pg_idx}:{local_rank}"
        ray_cls_with_init.update_options({"runtime_env": {"env_vars": env_vars}, "name": name})
        worker = ray_cls_with_init(placement_group=pg, placement_group_bundle_idx=local_rank,
                                   device_name=self.device_name)
        self._workers.append(worker)
        self._worker_names.append(name)

    @classmethod
    def from_detached(cls, name_prefix=None, worker_names=None, worker_handles=None, ray_cls_with_init=None, **kwargs):
        return cls(resource_pool=None, ray_cls_with_init=ray_cls_with_init, name_prefix=name_prefix,
                   worker_names=worker_names, worker_handles=worker_handles, **kwargs)

    def spawn(self, prefix_set):
        """One worker group per role over the same worker processes, each with
        that role's methods under their own names."""
        new_worker_group_dict = {}
        for prefix in prefix_set:
            new_wg = self.from_detached(name_prefix=self.name_prefix, worker_names=self._worker_names,
                                        worker_handles=self._workers, ray_cls_with_init=self.ray_cls_with_init,
                                        profile_steps=self.profile_steps,
                                        worker_nsight_options=self.worker_nsight_options)
            new_wg._master_addr, new_wg._master_port = self._master_addr, self._master_port
            new_wg.sub_cls_name = prefix
            cls = self.ray_cls_with_init.class_dict[prefix][0]
            new_wg._bind_worker_method(cls, func_generator)
            new_worker_group_dict[prefix] = new_wg
        return new_worker_group_dict

    def execute_all_async_split(self, method_name, per_args, per_kwargs):
        return [getattr(w, method_name).remote(*a, **k) for w, a, k in zip(self._workers, per_args, per_kwargs)]

    def execute_all_async(self, method_name: str, *args, **kwargs):
        return [getattr(w, method_name).remote(*args, **kwargs) for w in self._workers]

    def execute_all_sync(self, method_name: str, *args, **kwargs):
        return ray.get(self.execute_all_async(method_name, *args, **kwargs))

    execute_all = execute_all_async

    def execute_rank_zero_sync(self, method_name: str, *args, **kwargs):
        return ray.get(getattr(self._workers[0], method_name).remote(*args, **kwargs))

    @property
    def master_address(self):
        return self._master_addr

    @property
    def master_port(self):
        return self._master_port

    @property
    def workers(self):
        return self._workers

    @property
    def world_size(self):
        return len(self._workers)


def _unwrap_ray_remote(cls):
    return getattr(cls, "__ray_actor_class__", cls)


class WorkerDict(Worker):
    """The colocated actor: one instance of each role's worker class in one
    process; "<role>_<method>" calls reach that role's instance (verl builds
    this class per call and binds the prefixed methods on it; the stand-in
    resolves them by name so the class can be imported in the actor process)."""

    def __init__(self, class_dict):
        super().__init__()
        self.worker_dict = {}
        for key, (user_defined_cls, args, kwargs) in class_dict.items():
            self.worker_dict[key] = _unwrap_ray_remote(user_defined_cls)(*args, **kwargs)

    def __getattr__(self, name):
        worker_dict = self.__dict__.get("worker_dict") or {}
        for key in sorted(worker_dict, key=len, reverse=True):
            if name.startswith(key + "_"):
                method = getattr(worker_dict[key], name[len(key) + 1:])
                if hasattr(method, MAGIC_ATTR) or hasattr(getattr(type(worker_dict[key]), name[len(key) + 1:], None), MAGIC_ATTR):
                    return method
        raise AttributeError(name)


def create_colocated_worker_cls(class_dict: dict):
    """One actor class holding every role of `class_dict` (role -> RayClassWithInitArgs)."""
    spec = {key: (_unwrap_ray_remote(c.cls), c.args, c.kwargs) for key, c in class_dict.items()}
    remote_cls = RayClassWithInitArgs(ray.remote(WorkerDict), spec)
    remote_cls.class_dict = spec
    return remote_cls
