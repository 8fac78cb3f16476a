# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for vllm-project/vllm @ 35d5cda123ec28581759b6d34cde8052314fb1e6: vllm/v1/executor/multiproc_executor.py
# Written for profd's tests from that file; names and call order follow it, bodies are minimal.
"""MultiprocExecutor (distributed_executor_backend "mp"): world_size worker
processes, started with the multiprocessing context vLLM uses by default
(VLLM_WORKER_MULTIPROC_METHOD "fork"), each building its Worker in the
child; collective_rpc(method, args) runs the method on every worker and
returns their results in rank order; a worker's exception becomes
RuntimeError("Worker failed with error '<message>', please check the stack
trace above for the root cause") (get_response)."""

import multiprocessing
import os
import traceback

import standin_pool


def _answer(conn, worker, method, args):
    try:
        conn.send(("ok", getattr(worker, method)(*args)))
    except Exception as e:
        traceback.print_exc()
        conn.send(("err", str(e)))


def _worker_main(conn, instance_id, rank, use_torch):
    from vllm.v1.worker.gpu_worker import Worker

    standin_pool.serve(conn, lambda: Worker(instance_id, local_rank=rank, rank=rank, use_torch=use_torch), _answer)


class MultiprocExecutor:
    def __init__(self, instance_id, world_size, use_torch):
        ctx = multiprocessing.get_context(os.environ.get("VLLM_WORKER_MULTIPROC_METHOD", "fork"))
        self.workers = standin_pool.start(ctx, world_size, _worker_main, lambda rank: (instance_id, rank, use_torch),
                                          lambda rank: "VllmWorker-%d" % rank)

    def collective_rpc(self, method, args=()):
        for _, conn in self.workers:
            conn.send((method, tuple(args)))
        out, err = [], None
        for _, conn in self.workers:
            reply = conn.recv()
            if reply[0] == "err" and err is None:
                err = reply[1]
            out.append(reply[1] if reply[0] == "ok" else None)
        if err is not None:
            raise RuntimeError("Worker failed with error '%s', please check the stack trace above for the root "
                               "cause" % err)
        return out

    def profile(self, is_start=True):
        self.collective_rpc("profile", args=(is_start,))

    def shutdown(self):
        standin_pool.stop(self.workers)
        self.workers = []
