# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for volcengine/verl @ b178a3cd5: verl/workers/rollout/sglang_rollout/sglang_rollout.py
# Written for profd's tests from that file; names and signatures follow it, bodies are minimal.
"""ServerAdapter: the hybrid worker's side of an SGLang rollout (weights
handed to the server; nothing profd looks at)."""

from verl.workers.rollout.vllm_rollout.vllm_rollout import ServerAdapter as _Adapter


class ServerAdapter(_Adapter):
    pass
