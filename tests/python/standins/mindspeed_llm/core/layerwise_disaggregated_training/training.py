# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/core/layerwise_disaggregated_training/training.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The u-shaped split's get_model and train_step (the stand-in records the
call and runs Megatron's step)."""

import standin_trace


def get_model(model_provider_func, model_type=None, wrap_with_ddp=True):
    standin_trace.record("mindspeed", "u_shaped.get_model")
    return [model_provider_func(pre_process=True, post_process=True)]


def train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config):
    standin_trace.record("mindspeed", "u_shaped.train_step")
    from mindspeed_llm.tasks.megatron_adaptor_v2 import megatron_train_step_v0_12
    return megatron_train_step_v0_12(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config)
