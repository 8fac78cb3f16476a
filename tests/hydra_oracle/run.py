# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Print what Hydra composes: `run.py compose CONFIG_DIR NAME OVERRIDE...`
(hydra.compose, no HydraConfig: ${hydra:...} is not available there; use an
@hydra.main app for it). The config as YAML, unresolved, or Hydra's error."""
import sys

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "compose":
        print(__doc__, file=sys.stderr)
        return 2
    with initialize_config_dir(config_dir=sys.argv[2], version_base=None):
        try:
            cfg = compose(config_name=sys.argv[3], overrides=sys.argv[4:])
        except Exception as e:  # Hydra's message is the expectation
            print(f"{type(e).__name__}: {e}")
            return 1
    print(OmegaConf.to_yaml(cfg), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
