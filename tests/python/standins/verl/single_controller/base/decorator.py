# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/single_controller/base/decorator.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""@register and the dispatch modes the stand-in's workers use. A registered
method carries its dispatch settings under MAGIC_ATTR; the worker group binds
one driver-side function per registered method, which splits the arguments
over the workers (dispatch_fn), calls every worker, and joins the results
(collect_fn)."""

import functools
import inspect
from enum import Enum

MAGIC_ATTR = "attrs_3141562937"


class Dispatch(Enum):
    RANK_ZERO = 0
    ONE_TO_ALL = 1
    ALL_TO_ALL = 2
    DP_COMPUTE = 3
    DP_COMPUTE_PROTO = 4
    DIRECT_ROLLOUT_METHOD = 5


class Execute(Enum):
    ALL = 0
    RANK_ZERO = 1


def dispatch_one_to_all(worker_group, *args, **kwargs):
    n = worker_group.world_size
    return [args] * n, [kwargs] * n


def dispatch_all_to_all(worker_group, *args, **kwargs):
    n = worker_group.world_size
    per_args = [tuple(a[i] for a in args) for i in range(n)]
    per_kwargs = [{k: v[i] for k, v in kwargs.items()} for i in range(n)]
    return per_args, per_kwargs


def collect_all_to_all(worker_group, output):
    return output


def _split(data, n):
    from verl.protocol import DataProto

    if isinstance(data, DataProto):
        return data.chunk(n)
    return [data] * n


def dispatch_dp_compute_data_proto(worker_group, *args, **kwargs):
    n = worker_group.world_size
    split_args = [_split(a, n) for a in args]
    split_kwargs = {k: _split(v, n) for k, v in kwargs.items()}
    return ([tuple(a[i] for a in split_args) for i in range(n)], [{k: v[i] for k, v in split_kwargs.items()} for i in range(n)])


def collect_dp_compute_data_proto(worker_group, output):
    from verl.protocol import DataProto

    return DataProto.concat(output)


def dispatch_lazy_compute_data_proto(mesh_name, worker_group, *args, **kwargs):
    """Split by the data-parallel rank each worker registered for `mesh_name`
    (here every worker is its own dp rank: no tensor/pipeline parallelism)."""
    if mesh_name not in worker_group._dispatch_info:
        worker_group._dispatch_info[mesh_name] = worker_group._query_dispatch_info(mesh_name)
    dp_rank = worker_group._dispatch_info[mesh_name]
    dp_size = max(dp_rank) + 1
    split_args = [_split(a, dp_size) for a in args]
    split_kwargs = {k: _split(v, dp_size) for k, v in kwargs.items()}
    return ([tuple(a[dp_rank[r]] for a in split_args) for r in range(worker_group.world_size)],
            [{k: v[dp_rank[r]] for k, v in split_kwargs.items()} for r in range(worker_group.world_size)])


def collect_lazy_compute_data_proto(mesh_name, worker_group, output):
    from verl.protocol import DataProto

    if mesh_name not in worker_group._collect_info:
        worker_group._collect_info[mesh_name] = worker_group._query_collect_info(mesh_name)
    collect = worker_group._collect_info[mesh_name]
    return DataProto.concat([o for o, c in zip(output, collect) if c])


def make_nd_compute_dataproto_dispatch_fn(mesh_name):
    return {
        "dispatch_fn": functools.partial(dispatch_lazy_compute_data_proto, mesh_name),
        "collect_fn": functools.partial(collect_lazy_compute_data_proto, mesh_name),
    }


DISPATCH_MODE_FN_REGISTRY = {
    Dispatch.ONE_TO_ALL: {"dispatch_fn": dispatch_one_to_all, "collect_fn": collect_all_to_all},
    Dispatch.ALL_TO_ALL: {"dispatch_fn": dispatch_all_to_all, "collect_fn": collect_all_to_all},
    Dispatch.DP_COMPUTE: {"dispatch_fn": dispatch_all_to_all, "collect_fn": collect_all_to_all},
    Dispatch.DP_COMPUTE_PROTO: {"dispatch_fn": dispatch_dp_compute_data_proto, "collect_fn": collect_dp_compute_data_proto},
}


def get_predefined_dispatch_fn(dispatch_mode):
    return DISPATCH_MODE_FN_REGISTRY[dispatch_mode]


def register(dispatch_mode=Dispatch.ALL_TO_ALL, execute_mode=Execute.ALL, blocking=True, materialize_futures=True):
    def decorator(func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            return func(*args, **kwargs)

        @functools.wraps(func)
        async def async_inner(*args, **kwargs):
            return await func(*args, **kwargs)

        wrapper = async_inner if inspect.iscoroutinefunction(func) else inner
        setattr(wrapper, MAGIC_ATTR, {"dispatch_mode": dispatch_mode, "execute_mode": execute_mode, "blocking": blocking})
        return wrapper

    return decorator
