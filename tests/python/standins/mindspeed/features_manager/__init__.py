# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 030ccc9c43423ed7fdfadb6c79f3d63ad36aa411: mindspeed/features_manager/__init__.py
