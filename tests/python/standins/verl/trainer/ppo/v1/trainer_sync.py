# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/v1/trainer_sync.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.

from verl.trainer.ppo.v1.trainer_base import PPOTrainer, register_trainer
from verl.utils.profiler import marked_timer


@register_trainer("sync")
class PPOTrainerSync(PPOTrainer):
    """Synchronous PPO trainer: trainer and rollout colocated, no partial rollout."""

    def on_init_end(self):
        self.checkpoint_manager.update_weights(self.global_steps)

    def on_step_end(self):
        with marked_timer("update_weights", self.timing_raw, color="red"):
            self.checkpoint_manager.update_weights(self.global_steps)

    def on_sample_end(self):
        self.checkpoint_manager.sleep_replicas()
