# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/training/arguments.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""The features' arguments in Megatron's parser (parse_args_decorator) and
their validation around Megatron's (validate_args_v2_decorator), both
registered as patches by MegatronBasicFeature."""

from functools import wraps

from mindspeed.features_manager.features_manager import MindSpeedFeaturesManager


def extra_args_provider_decorator(extra_args_provider):
    @wraps(extra_args_provider)
    def wrapper(parser):
        if extra_args_provider is not None:
            parser = extra_args_provider(parser)
        return process_args_v2(parser)

    return wrapper


def parse_args_decorator(parse_args):
    @wraps(parse_args)
    def wrapper(extra_args_provider=None, ignore_unknown_args=False):
        return parse_args(extra_args_provider_decorator(extra_args_provider), ignore_unknown_args)

    return wrapper


def process_args_v2(parser):
    MindSpeedFeaturesManager.register_features_args(parser)
    return parser


def validate_args_v2_decorator(megatron_validate_args):
    @wraps(megatron_validate_args)
    def wrapper(args, defaults=None):
        if defaults is None:
            defaults = {}
        MindSpeedFeaturesManager.pre_validate_features_args(args)
        args = megatron_validate_args(args, defaults)
        MindSpeedFeaturesManager.post_validate_features_args(args=args)
        MindSpeedFeaturesManager.validate_features_args(args=args)
        return args

    return wrapper
