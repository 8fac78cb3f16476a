# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/features_manager/functional/npu_datadump.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""--npu-datadump: msprobe's PrecisionDebugger started around each
train_step (a wrapper on megatron.training.training.train_step). The
stand-in needs no msprobe. Not reproduced: its second patch, a wrapper on
megatron.training.ft_integration.on_training_step_end (absent from the
Megatron stand-in); MindSpeed-LLM's train() stops and steps the debugger
itself after each train_step (_enable_npu_datadump_step_end)."""

from mindspeed.features_manager.feature import MindSpeedFeature


class NPUDataDumpFeature(MindSpeedFeature):
    def __init__(self):
        super(NPUDataDumpFeature, self).__init__("npu-datadump")

    def register_args(self, parser):
        group = parser.add_argument_group(title=self.feature_name)
        group.add_argument("--npu-datadump", action="store_true", default=False)

    def register_patches(self, patch_manager, args):
        if args.npu_datadump:
            from mindspeed.functional.npu_datadump.npu_datadump import dump_start_wrapper
            patch_manager.register_patch("megatron.training.training.train_step", dump_start_wrapper)
