# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for vllm-project/vllm @ 35d5cda123ec28581759b6d34cde8052314fb1e6 (the engine's profiler path only).
"""The part of vLLM that verl's vLLMHttpServer drives: AsyncLLM
(v1/engine/async_llm.py), the multiprocessing executor
(v1/executor/multiproc_executor.py: one worker process per rank, started
when the engine starts, inheriting its environment) and the GPU worker
(v1/worker/gpu_worker.py: its torch profiler, configured when the worker
is built). vLLM's EngineCore process is folded into the AsyncLLM process
here: the workers are its children."""
