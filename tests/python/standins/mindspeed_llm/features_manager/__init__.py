# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/features_manager/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""create_features_list() in MindSpeed-LLM's order, reduced to the features
whose patches the tests check (megatron basic, llm, functional, pipeline
parallel, swap, layerwise disaggregated training), set as
MindSpeedFeaturesManager's list at import."""

from mindspeed.features_manager import NPUDataDumpFeature, SmartSwapFeature
from mindspeed.features_manager.features_manager import MindSpeedFeaturesManager

from mindspeed_llm.features_manager.functional.profiling import ProfilingFeature
from mindspeed_llm.features_manager.layerwise_disaggregated_training.u_shaped_split_feature import UShapedSplitFeature
from mindspeed_llm.features_manager.megatron_basic.megatron_basic import MegatronBasicFeature
from mindspeed_llm.features_manager.megatron_basic.training_basic import TrainingBasicFeature
from mindspeed_llm.features_manager.pipeline_parallel.dualpipev_feature import DualpipeVFeature


def create_features_list():
    features_list = []
    features_list.extend([MegatronBasicFeature()])          # add_megatron_basic_features
    features_list.extend([TrainingBasicFeature()])          # add_llm_features
    features_list.extend([ProfilingFeature(), NPUDataDumpFeature()])  # add_functional_features
    features_list.extend([DualpipeVFeature()])              # add_pipeline_parallel_features
    features_list.extend([SmartSwapFeature()])              # add_swap_manage_features
    features_list.extend([UShapedSplitFeature()])           # add_layerwise_disaggregated_training_feature
    return features_list


def set_default_features_list():
    MindSpeedFeaturesManager.set_features_list(create_features_list())


set_default_features_list()
