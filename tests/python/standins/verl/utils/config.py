# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/config.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Configuration objects. verl composes its configuration with Hydra into an
OmegaConf DictConfig; the stand-in uses `Config`, a dict with attribute
access and DictConfig's .get(), and `select` for OmegaConf.select. No
interpolation: the stand-in's defaults are already resolved."""

import dataclasses


class Config(dict):
    def __init__(self, data=None):
        super().__init__()
        for k, v in (data or {}).items():
            self[k] = _wrap(v)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = _wrap(value)

    def to_container(self):
        return {k: (v.to_container() if isinstance(v, Config) else v) for k, v in self.items()}


def _wrap(v):
    if isinstance(v, Config):
        return v
    if isinstance(v, dict):
        return Config(v)
    return v


def select(cfg, key, default=None):
    """OmegaConf.select(cfg, "a.b.c", default=...)."""
    cur = cfg
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return default
        cur = cur[part]
    return cur


def omega_conf_to_dataclass(config, dataclass_type=None):
    """Build `dataclass_type` (or the class named by `_target_`) from a config
    section, passing the fields it declares; None and {} give None."""
    if config is None or (isinstance(config, dict) and not config):
        return None
    if dataclass_type is None:
        target = config.get("_target_") if isinstance(config, dict) else None
        if not target:
            return config
        import importlib

        module, _, name = target.rpartition(".")
        dataclass_type = getattr(importlib.import_module(module), name)
    names = {f.name for f in dataclasses.fields(dataclass_type)}
    kwargs = {}
    for k, v in config.items():
        if k in names:
            kwargs[k] = v.to_container() if isinstance(v, Config) else v
    return dataclass_type(**kwargs)
