# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 030ccc9c43423ed7fdfadb6c79f3d63ad36aa411: mindspeed/features_manager/feature.py
# Written for profd's tests from that file; names and signatures follow it, bodies are minimal.


class MindSpeedFeature:
    """A feature registers its command-line arguments, validates them and
    registers its patches of Megatron."""

    def __init__(self, feature_name: str, optimization_level: int = 2):
        self.feature_name = feature_name.strip().replace("-", "_")
        self.optimization_level = optimization_level
        self.default_patches = self.optimization_level == 0

    def register_args(self, parser):
        pass

    def pre_validate_args(self, args):
        pass

    def validate_args(self, args):
        pass

    def post_validate_args(self, args):
        pass

    def register_patches(self, patch_manager, args):
        pass
