# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/pipeline_parallel/dualpipev_feature.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MindSpeed-LLM's DualpipeVFeature: with --schedules-method dualpipev,
DualPipeV's get_model, train_step and evaluate replace Megatron's (the
schedule, layer and embedding patches of the same feature are not needed
by the tests)."""

from mindspeed.features_manager.pipeline_parallel.dualpipev_feature import DualpipeVFeature as MSDualpipeVFeature


class DualpipeVFeature(MSDualpipeVFeature):
    def register_patches(self, patch_manager, args):
        from mindspeed.core.pipeline_parallel.dualpipev.dualpipev_chunks import evaluate, get_model, train_step

        if args.schedules_method == "dualpipev":
            patch_manager.register_patch("megatron.training.training.get_model", get_model)
            patch_manager.register_patch("megatron.training.training.train_step", train_step)
            patch_manager.register_patch("megatron.training.training.evaluate", evaluate)
