# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/trainer/ppo/v1/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
# The colocate-async and separate-async trainers are not in the stand-in.

from .agent_loop_tq import AgentLoopManagerTQ
from .trainer_base import PPOTrainer, get_trainer_cls, register_trainer
from .trainer_sync import PPOTrainerSync

__all__ = ["PPOTrainer", "register_trainer", "get_trainer_cls", "PPOTrainerSync", "AgentLoopManagerTQ"]
