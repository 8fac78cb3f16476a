# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/features_manager/memory/smart_swap.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""--smart-swap: changes the NPU allocator (after a 10 s delay; not in the
stand-in) and wraps megatron.training.training.train_step."""

from mindspeed.features_manager.feature import MindSpeedFeature


class SmartSwapFeature(MindSpeedFeature):
    def __init__(self):
        super().__init__("smart-swap", 2)

    def register_args(self, parser):
        group = parser.add_argument_group(title=self.feature_name)
        group.add_argument("--smart-swap", action="store_true", default=False)

    def register_patches(self, patch_manager, args):
        if getattr(args, self.feature_name, None):
            from mindspeed.core.memory.smart_swap.swap_megatron_adaptor import train_step_wrapper
            patch_manager.register_patch("megatron.training.training.train_step", train_step_wrapper)
