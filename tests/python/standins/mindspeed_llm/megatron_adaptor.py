# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/megatron_adaptor.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Imported first by MindSpeed-LLM's launchers; MindSpeed-LLM patches Megatron
here (features register their arguments and patches). The stand-in does
three things:

1. registers the features' arguments (ProfilingFeature) in Megatron's parser
   and runs their validate_args, as MindSpeed's features manager does;
2. MindSpeed-LLM runs on Megatron core_v0.12.1 (docs: release notes), whose
   --profile-ranks defaults to [0] (one or more values) - the Megatron
   stand-in follows Megatron-LM main (default [] = all ranks), so the pinned
   default is put back here;
3. core_v0.12.1's train_step(forward_step_func, data_iterator, model,
   optimizer, opt_param_scheduler, config) returns 7 values, which
   mindspeed_llm.training.training unpacks; main's takes forward_backward_func
   and returns 8 - a 7-value train_step is put in its place here.
Points 2 and 3 stand in for the version pin, not for code in this file."""

import megatron.training.arguments as _arguments
import megatron.training.training as _training
from megatron.core.pipeline_parallel import get_forward_backward_func

from mindspeed_llm.features_manager.functional.profiling import ProfilingFeature

FEATURES = [ProfilingFeature()]

_orig_parse_args = _arguments.parse_args
_orig_add_profiling_args = _arguments._add_profiling_args
_orig_validate_args = _arguments.validate_args
_orig_train_step = _training.train_step


def _add_profiling_args_v0_12(parser):
    _orig_add_profiling_args(parser)
    for action in parser._actions:
        if "--profile-ranks" in action.option_strings:
            action.default = [0]
            action.nargs = "+"
    return parser


def parse_args(extra_args_provider=None, ignore_unknown_args=False):
    def provider(parser):
        for feature in FEATURES:
            feature.register_args(parser)
        return extra_args_provider(parser) if extra_args_provider else parser

    return _orig_parse_args(provider, ignore_unknown_args)


def validate_args(args, defaults={}):
    for feature in FEATURES:
        feature.pre_validate_args(args)
    args = _orig_validate_args(args, defaults)
    for feature in FEATURES:
        feature.validate_args(args)
        feature.post_validate_args(args)
    return args


def train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config):
    return _orig_train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config,
                            get_forward_backward_func())[:7]


_arguments._add_profiling_args = _add_profiling_args_v0_12
_arguments.parse_args = parse_args
_arguments.validate_args = validate_args
_training.train_step = train_step
import megatron.training.initialize as _initialize  # noqa: E402

_initialize.parse_args = parse_args
_initialize.validate_args = validate_args
