# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""verl stand-in: a driver, worker groups as processes, a hybrid
actor/rollout/ref worker, a critic group and rollout server replicas, with
verl's profiler hooks (see tests/python/standins/README.md)."""

from .protocol import DataProto

__version__ = "0.10.0.dev-standin"

__all__ = ["DataProto"]
