# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/features_manager/pipeline_parallel/dualpipev_feature.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""--schedules-method dualpipev: MindSpeed-LLM's subclass registers the
patches (mindspeed_llm/features_manager/pipeline_parallel/dualpipev_feature.py)."""

from mindspeed.features_manager.feature import MindSpeedFeature


class DualpipeVFeature(MindSpeedFeature):
    def __init__(self):
        super().__init__("schedules-method")

    def register_args(self, parser):
        group = parser.add_argument_group(title=self.feature_name)
        group.add_argument("--schedules-method", type=str, default=None, choices=["dualpipev"])
        group.add_argument("--dualpipev-dw-detach", action="store_true")
