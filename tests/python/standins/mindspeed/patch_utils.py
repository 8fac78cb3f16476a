# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/patch_utils.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MindSpeed's patch manager, with the semantics profd must not disturb.

register_patch(name, new_func) records a Patch; nothing changes until
apply_patches(). A new_func whose __name__ ends in "wrapper" or "decorator"
is a wrapper (stacked, in registration order, on the replacement or on the
original); any other is the replacement (a second one raises unless
force_patch). Patch.apply_patch():
  1. resolves `module.attr` (importing the module path; a class on the path
     is walked with getattr) and reads the attribute's CURRENT value;
  2. the first time, remembers that module and value as the original;
  3. final = replacement or original, then each wrapper applied in turn;
  4. sets module.attr = final, then, for every module in sys.modules with an
     attribute of that name whose id() is the CURRENT value's id, sets that
     attribute to final as well.
So a module that imported the original (`from megatron.training.training
import train_step`) gets the patch only if its attribute is still the very
object the patched module held at apply time: rebinding it beforehand
leaves that module on the unpatched function. remove_patch() sets back the
original wherever the final function is found (modules named *mindspeed*
skipped). create_dummy (dummy modules for missing imports) is not needed
by the tests and not reproduced."""

import importlib
import sys
from typing import Dict


def dummy_function_wrapper(func_name):
    def dummy_function(*args, **kwargs):
        raise RuntimeError("function {} no exist".format(func_name))

    return dummy_function


class Patch:
    def __init__(self, orig_func_name, new_func, create_dummy):
        parts = orig_func_name.rsplit(".", 1)
        self.orig_module_name, self.orig_func_name = (parts[0], None) if len(parts) == 1 else parts
        self.orig_module = None
        self.orig_func = None
        self.patch_func = None
        self.final_patch_func = None
        self.wrappers = []
        if new_func is None:
            new_func = dummy_function_wrapper(orig_func_name)
        self.set_patch_func(new_func)
        self.is_applied = False
        self.create_dummy = create_dummy

    def set_patch_func(self, new_func, force_patch=False):
        if getattr(new_func, "__name__", "").endswith(("wrapper", "decorator")):
            if new_func not in self.wrappers:
                self.wrappers.append(new_func)
        else:
            if self.patch_func and not force_patch:
                raise RuntimeError("the patch of {} exist !".format(self.orig_func_name))
            self.patch_func = new_func
        self.is_applied = False

    def remove_wrappers(self, wrapper_names=None):
        if wrapper_names is None:
            self.wrappers.clear()
            return
        names = [wrapper_names] if isinstance(wrapper_names, str) else wrapper_names
        self.wrappers = [w for w in self.wrappers if w.__name__ not in names]

    def remove_patch(self):
        for key, value in sys.modules.copy().items():
            if "mindspeed" in key or key == "torch.classes":
                continue
            if self.orig_func_name is not None and hasattr(value, self.orig_func_name) \
                    and id(getattr(value, self.orig_func_name)) == id(self.final_patch_func):
                setattr(value, self.orig_func_name, self.orig_func)
        self.patch_func = None
        self.final_patch_func = None
        self.is_applied = False

    def apply_patch(self):
        if self.is_applied:
            return
        current_module, current_func = Patch.parse_path(self.orig_module_name, self.orig_func_name,
                                                        self.create_dummy)
        if self.orig_module is None:
            self.orig_module, self.orig_func = current_module, current_func
        final_patch_func = self.orig_func if self.patch_func is None else self.patch_func
        for wrapper in self.wrappers:
            final_patch_func = wrapper(final_patch_func)
        if self.orig_func_name is not None:
            setattr(self.orig_module, self.orig_func_name, final_patch_func)
        for _, value in sys.modules.copy().items():
            if self.orig_func_name is not None and hasattr(value, self.orig_func_name) \
                    and id(getattr(value, self.orig_func_name)) == id(current_func):
                setattr(value, self.orig_func_name, final_patch_func)
        self.is_applied = True
        self.final_patch_func = final_patch_func

    @staticmethod
    def parse_path(module_path, function_name, create_dummy):
        modules = module_path.split(".")
        for i in range(1, len(modules) + 1):
            parent = ".".join(modules[:i - 1])
            path = ".".join(modules[:i])
            try:
                importlib.import_module(path)
            except ModuleNotFoundError:
                if not parent or not hasattr(importlib.import_module(parent), modules[i - 1]):
                    raise
                owner = getattr(importlib.import_module(parent), modules[i - 1])  # a class on the path
                if hasattr(owner, function_name):
                    return owner, getattr(owner, function_name)
                raise RuntimeError("no exist {} of {}".format(function_name, owner))
        module = sys.modules[module_path]
        if function_name is not None and not hasattr(module, function_name):
            setattr(module, function_name, None)
        return module, getattr(module, function_name) if function_name is not None else None


class MindSpeedPatchesManager:
    patches_info: Dict[str, Patch] = {}

    @staticmethod
    def register_patch(orig_func_name, new_func=None, force_patch=False, create_dummy=False):
        if orig_func_name not in MindSpeedPatchesManager.patches_info:
            MindSpeedPatchesManager.patches_info[orig_func_name] = Patch(orig_func_name, new_func, create_dummy)
        else:
            MindSpeedPatchesManager.patches_info[orig_func_name].set_patch_func(new_func, force_patch)

    @staticmethod
    def remove_patches():
        for patch in MindSpeedPatchesManager.patches_info.values():
            patch.remove_patch()
            patch.remove_wrappers()

    @staticmethod
    def apply_patches():
        for patch in MindSpeedPatchesManager.patches_info.values():
            patch.apply_patch()
