# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/megatron_basic/training_basic.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""TrainingBasicFeature (level 0): MindSpeed-LLM's train() replaces
Megatron's (importing mindspeed_llm.training.training here, during
registration, before the patches are applied)."""

from mindspeed.features_manager.feature import MindSpeedFeature


class TrainingBasicFeature(MindSpeedFeature):
    def __init__(self):
        super().__init__(feature_name="training", optimization_level=0)

    def register_patches(self, patch_manager, args):
        from mindspeed_llm.training.training import train
        patch_manager.register_patch("megatron.training.training.train", train)
