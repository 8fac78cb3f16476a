# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/protocol.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""DataProto, reduced to what the stand-in passes between the driver and the
workers: `batch` maps a field to one list entry per sample, `meta_info`
carries per-call settings (verl's TensorDict / KVBatchMeta play this part in
the V1 trainer; the stand-in uses DataProto for both)."""


class DataProto:
    def __init__(self, batch=None, non_tensor_batch=None, meta_info=None):
        self.batch = dict(batch or {})
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    @classmethod
    def from_single_dict(cls, data, meta_info=None):
        return cls(batch=data, meta_info=meta_info)

    def __len__(self):
        for v in self.batch.values():
            return len(v)
        return 0

    def select_rows(self, idx):
        return DataProto({k: [v[i] for i in idx] for k, v in self.batch.items()}, dict(self.non_tensor_batch), dict(self.meta_info))

    def chunk(self, chunks):
        n = len(self)
        size = (n + chunks - 1) // chunks if chunks else n
        return [self.select_rows(range(i * size, min(n, (i + 1) * size))) for i in range(chunks)]

    @staticmethod
    def concat(data):
        data = [d for d in data if d is not None]
        if not data:
            return DataProto()
        out = DataProto(meta_info=dict(data[0].meta_info))
        for k in data[0].batch:
            out.batch[k] = [x for d in data for x in d.batch.get(k, [])]
        return out

    def union(self, other):
        self.batch.update(other.batch)
        self.meta_info.update(other.meta_info)
        return self

    def repeat(self, repeat_times=2, interleave=True):
        n = len(self)
        if interleave:
            idx = [i for i in range(n) for _ in range(repeat_times)]
        else:
            idx = [i for _ in range(repeat_times) for i in range(n)]
        return self.select_rows(idx)


class DataProtoFuture:
    """The result of a non-blocking worker-group call: get() collects it."""

    def __init__(self, collect_fn, futures):
        self.collect_fn = collect_fn
        self.futures = futures

    def get(self):
        from verl.single_controller.ray.base import ray

        return self.collect_fn(ray.get(self.futures))
