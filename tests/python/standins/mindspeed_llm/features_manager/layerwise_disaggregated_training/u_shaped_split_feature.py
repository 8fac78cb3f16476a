# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/layerwise_disaggregated_training/u_shaped_split_feature.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""--layerwise-disaggregated-training (u-shaped split learning): its own
get_model and train_step replace Megatron's (with its schedule, p2p and
recompute patches, not needed by the tests)."""

from mindspeed.features_manager.feature import MindSpeedFeature


class UShapedSplitFeature(MindSpeedFeature):
    def __init__(self):
        super().__init__(feature_name="u-shaped-split", optimization_level=0)

    def register_args(self, parser):
        group = parser.add_argument_group(title=self.feature_name)
        group.add_argument("--layerwise-disaggregated-training", action="store_true")

    def register_patches(self, patch_manager, args):
        if getattr(args, "layerwise_disaggregated_training", None):
            from mindspeed_llm.core.layerwise_disaggregated_training.training import get_model, train_step
            patch_manager.register_patch("megatron.training.training.get_model", get_model)
            patch_manager.register_patch("megatron.training.training.train_step", train_step)
