# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/features_manager/feature.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The feature base class: a feature applies when its optimization level is
within --optimization-level (default 2) and its flag is set, or always
when its level is 0 (default patches)."""

from mindspeed.patch_utils import MindSpeedPatchesManager  # noqa: F401  (imported first, as in MindSpeed)


class MindSpeedFeature:
    def __init__(self, feature_name: str, optimization_level: int = 2):
        self.feature_name = feature_name.lower().strip().replace("-", "_")
        self.optimization_level = optimization_level
        self.default_patches = self.optimization_level == 0

    def is_need_apply(self, args):
        return (self.optimization_level <= getattr(args, "optimization_level", 2)
                and getattr(args, self.feature_name, None)) or self.default_patches

    def register_args(self, parser):
        pass

    def pre_validate_args(self, args):
        pass

    def validate_args(self, args):
        pass

    def post_validate_args(self, args):
        pass

    def pre_register_patches(self, patch_manager, args):
        pass

    def register_patches(self, patch_manager, args):
        pass
