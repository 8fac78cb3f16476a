# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for sgl-project/sglang (the profiler path only): scheduler_profiler_mixin.py @
# 034c23fa9b4b0d76f9120164223561668cbf2c08, tokenizer_communicator_mixin.py @ 40ef116f011cf1599811af1089ddf00971092bcf.
"""The part of SGLang verl's SGLangHttpServer drives: the TokenizerManager
in the server process and one scheduler process per tensor-parallel rank
(SGLang's launch starts them with multiprocessing; each runs the model of
its rank and its own torch profiler)."""
