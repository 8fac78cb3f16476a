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


def _worker_main(conn, instance_id, rank, use_torch):
    from vllm.v1.worker.gpu_worker import Worker

    code = 0
    try:
        worker = Worker(instance_id, local_rank=rank, rank=rank, use_torch=use_torch)
        while True:
            try:
                method, args = conn.recv()
            except EOFError:
                break
            if method is None:
                break
            try:
                conn.send(("ok", getattr(worker, method)(*args)))
            except Exception as e:
                traceback.print_exc()
                conn.send(("err", str(e)))
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


class MultiprocExecutor:
    def __init__(self, instance_id, world_size, use_torch):
        ctx = multiprocessing.get_context(os.environ.get("VLLM_WORKER_MULTIPROC_METHOD", "fork"))
        self.workers = []
        for rank in range(world_size):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker_main, args=(child, instance_id, rank, use_torch), daemon=True,
                            name="VllmWorker-%d" % rank)
            p.start()
            child.close()
            self.workers.append((p, parent))

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
        for p, conn in self.workers:
            try:
                conn.send((None, ()))
            except OSError:
                pass
            p.join(10)
        self.workers = []
