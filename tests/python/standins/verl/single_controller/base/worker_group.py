# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/single_controller/base/worker_group.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""WorkerGroup: binds one driver-side function per @register'ed worker
method (dispatch, call every worker, collect)."""

from .decorator import MAGIC_ATTR, get_predefined_dispatch_fn


class ResourcePool:
    """`process_on_nodes[i]` worker processes on node i."""

    def __init__(self, process_on_nodes=None, max_colocate_count: int = 10, n_gpus_per_node=8) -> None:
        self._store = list(process_on_nodes or [])
        self.max_colocate_count = max_colocate_count
        self.n_gpus_per_node = n_gpus_per_node

    @property
    def world_size(self):
        return sum(self._store)

    @property
    def store(self):
        return self._store

    def local_world_size_list(self):
        return [n for n in self._store for _ in range(n)]

    def local_rank_list(self):
        return [i for n in self._store for i in range(n)]


class ClassWithInitArgs:
    def __init__(self, cls, *args, **kwargs) -> None:
        self.cls = cls
        self.args = args
        self.kwargs = kwargs
        self.fused_worker_used = False


class WorkerGroup:
    def __init__(self, resource_pool: ResourcePool, **kwargs) -> None:
        self._is_init_with_detached_workers = resource_pool is None
        self.fused_worker_used = False
        self._procecss_dispatch_config = resource_pool.store if resource_pool is not None else None
        self._workers = []
        self._worker_names = []
        self._dispatch_info = {}
        self._collect_info = {}
        self._master_addr = None
        self._master_port = None

    @property
    def world_size(self):
        return len(self._workers)

    def _bind_worker_method(self, user_defined_cls, func_generator):
        method_names = []
        for method_name in dir(user_defined_cls):
            try:
                method = getattr(user_defined_cls, method_name)
                assert callable(method)
            except Exception:
                continue
            if not hasattr(method, MAGIC_ATTR):
                continue
            attribute = getattr(method, MAGIC_ATTR)
            dispatch_mode = attribute["dispatch_mode"]
            if isinstance(dispatch_mode, dict):
                fns = dispatch_mode
            else:
                fns = get_predefined_dispatch_fn(dispatch_mode)
            func = func_generator(self, method_name, dispatch_fn=fns["dispatch_fn"], collect_fn=fns["collect_fn"],
                                  execute_fn=None, blocking=attribute["blocking"])
            setattr(self, method_name, func)
            method_names.append(method_name)
        return method_names
