# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/functional/profiling.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The profiling feature: MindSpeed-LLM's own profiling arguments. --profile,
--profile-step-start/-end and --profile-ranks are Megatron's (core_v0.12.1:
defaults 10, 12, [0]); validate_args rejects profile_step_start < 1."""

from argparse import ArgumentParser

from mindspeed.features_manager.feature import MindSpeedFeature


class ProfilingFeature(MindSpeedFeature):
    def __init__(self):
        super(ProfilingFeature, self).__init__(feature_name="profiling", optimization_level=0)

    def register_args(self, parser: ArgumentParser):
        group = parser.add_argument_group(title=self.feature_name)
        group.add_argument("--profile-export-type", type=str, default="text", choices=["text", "db"])
        group.add_argument("--profile-level", type=str, default="level0",
                           choices=["level_none", "level0", "level1", "level2"])
        group.add_argument("--profile-data-simplification", action="store_true")
        group.add_argument("--profile-with-stack", action="store_true")
        group.add_argument("--profile-with-memory", action="store_true")
        group.add_argument("--profile-record-shapes", action="store_true")
        group.add_argument("--profile-with-cpu", action="store_true")
        group.add_argument("--profile-save-path", type=str, default="./profile_dir")

    def validate_args(self, args):
        super().validate_args(args)
        if hasattr(args, "profile_step_start") and args.profile_step_start < 1:
            raise AssertionError(f"profile_step_start should be greater than 0 but now it is {args.profile_step_start}")
