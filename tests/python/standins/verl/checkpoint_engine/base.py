# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/checkpoint_engine/base.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""CheckpointEngineManager: weights from the actor worker group to the rollout
replicas. With the "naive" backend (colocated sync training) update_weights
is the hybrid workers' own update_weights (the rollout adapter in each
process resumes the engine); sleep_replicas puts every replica's engine to
sleep."""

from verl.single_controller.ray.base import ray


class CheckpointEngineManager:
    def __init__(self, config, actor_wg, replicas):
        self.config = config
        self.backend = config.get("backend", "naive") if config else "naive"
        self.actor_wg = actor_wg
        self.replicas = replicas

    def sleep_replicas(self):
        for r in self.replicas:
            r.sleep()

    def wake_up_replicas(self):
        for r in self.replicas:
            r.wake_up()

    def update_weights(self, global_steps: int = None):
        if self.backend == "naive":
            self.actor_wg.update_weights(global_steps=global_steps, mode=self.backend).get()
            return {}
        raise NotImplementedError("the stand-in has the naive backend only")
