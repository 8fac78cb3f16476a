# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Drop-in integrations: profile a job with no change to its code.

- PROFD_AUTO=1: any PyTorch program; a step ends at each optimizer step
  (profd.integrations.pytorch), and the frameworks below take over in their
  own processes.
- verl: profd.integrations.verl (VERL_USE_EXTERNAL_MODULES=profd.integrations.verl,
  or PROFD_VERL=1).
- MindSpeed-LLM: profd.integrations.mindspeed (PROFD_MINDSPEED=1).
- Megatron-LM: profd.integrations.megatron (PROFD_MEGATRON=1).

The variables reach the integrations through the `profd-auto.pth` file
installed next to the package, which does nothing unless one of them is
set. Every integration fails open: a framework version it does not
recognise gets one log line (logger "profd") and an untouched job.
"""
