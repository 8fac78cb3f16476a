# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/single_controller/base/worker.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Worker: every worker process learns its place from the environment its
worker group gave it (WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT; LOCAL_RANK
defaults to 0, as each Ray worker sees one device) and writes the values back
into os.environ (Worker._configure_with_store)."""

import os

from .decorator import Dispatch, Execute, register


class Worker:
    @classmethod
    def env_keys(cls):
        return ["WORLD_SIZE", "RANK", "LOCAL_WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES"]

    def __init__(self, cuda_visible_devices=None) -> None:
        world_size = int(os.environ["WORLD_SIZE"])
        rank = int(os.environ["RANK"])
        self._rank = rank
        self._world_size = world_size
        store = {
            "_world_size": world_size,
            "_rank": rank,
            "_local_world_size": int(os.getenv("LOCAL_WORLD_SIZE", "1")),
            "_local_rank": int(os.getenv("LOCAL_RANK", "0")),
            "_master_addr": os.environ["MASTER_ADDR"],
            "_master_port": os.environ["MASTER_PORT"],
        }
        if cuda_visible_devices is not None:
            store["_cuda_visible_devices"] = cuda_visible_devices
        self._configure_with_store(store=store)
        self.fused_worker_dict = {}
        self.__dispatch_dp_rank = {}
        self.__collect_dp_rank = {}

    def _configure_with_store(self, store: dict):
        store_env_dict = {f"_{key.lower()}": store.get(f"_{key.lower()}", None) for key in type(self).env_keys()}
        self.__dict__.update(store_env_dict)
        for key in type(self).env_keys():
            val = self.__dict__.get(f"_{key.lower()}", None)
            if val is not None:
                os.environ[key] = str(val)

    def _register_dispatch_collect_info(self, mesh_name: str, dp_rank: int, is_collect: bool):
        self.__dispatch_dp_rank[mesh_name] = dp_rank
        self.__collect_dp_rank[mesh_name] = is_collect

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def _query_dispatch_info(self, mesh_name: str):
        return self.__dispatch_dp_rank[mesh_name]

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def _query_collect_info(self, mesh_name: str):
        return self.__collect_dp_rank[mesh_name]

    def get_dispatch_collect(self):
        return {"dispatch_dp_rank": dict(self.__dispatch_dp_rank), "collect_dp_rank": dict(self.__collect_dp_rank)}

    def set_dispatch_collect(self, mesh_name: str, dispatch_dp_rank: dict, collect_dp_rank: dict):
        for dp_rank in dispatch_dp_rank.values():
            self.__dispatch_dp_rank[mesh_name] = dp_rank
        for is_collect in collect_dp_rank.values():
            self.__collect_dp_rank[mesh_name] = is_collect

    def get_master_addr_port(self):
        return self._master_addr, self._master_port

    @property
    def world_size(self):
        return self._world_size

    @property
    def rank(self):
        return self._rank

    @register(dispatch_mode=Dispatch.ALL_TO_ALL, execute_mode=Execute.RANK_ZERO)
    def execute_func_rank_zero(self, func, *args, **kwargs):
        return func(*args, **kwargs)
