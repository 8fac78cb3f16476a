# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/core/pipeline_parallel/dualpipev/dualpipev_chunks.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""DualPipeV's train_step (it runs the cut-in-half schedule; the stand-in
records the call and runs Megatron's step) and get_model / evaluate, which
the feature patches alongside."""

import standin_trace


def train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config):
    standin_trace.record("mindspeed", "dualpipev.train_step")
    from mindspeed_llm.tasks.megatron_adaptor_v2 import megatron_train_step_v0_12
    return megatron_train_step_v0_12(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config)


def get_model(model_provider_func, model_type=None, wrap_with_ddp=True):
    standin_trace.record("mindspeed", "dualpipev.get_model")
    return [model_provider_func(pre_process=True, post_process=True)]


def evaluate(*args, **kwargs):
    standin_trace.record("mindspeed", "dualpipev.evaluate")
    return None
