# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/megatron_basic/megatron_basic.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MegatronBasicFeature (level 0, always applied): among its many patches,
the argument ones (register_non_mcore_basic_patches)."""

from mindspeed.features_manager.feature import MindSpeedFeature


class MegatronBasicFeature(MindSpeedFeature):
    def __init__(self):
        super().__init__("megatron-basic", optimization_level=0)

    def register_patches(self, patch_manager, args):
        self.register_non_mcore_basic_patches(patch_manager, args)

    def register_non_mcore_basic_patches(self, pm, args):
        from mindspeed_llm.training.arguments import parse_args_decorator, validate_args_v2_decorator
        pm.register_patch("megatron.training.arguments.parse_args", parse_args_decorator)
        pm.register_patch("megatron.training.arguments.validate_args", validate_args_v2_decorator)
