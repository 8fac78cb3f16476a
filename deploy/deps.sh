#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Install the Debian packages profd needs to build and test, when missing.
# Usage: deploy/deps.sh [extra-package ...]
set -euo pipefail

packages=(
  cmake make gcc pkg-config clang-format
  libuv1-dev libnng-dev nng-utils libyaml-dev libcjson-dev libcmocka-dev libxxhash-dev zlib1g-dev
  python3 python3-venv iproute2 procps xxhash
  # the Python package's C step scope, profd._speedups (without: the ctypes path)
  python3-dev
  # the Python client's torch tests and demo (Debian's torch imports under /usr/bin/python3)
  python3-torch
  # pip install of the Python client, offline (Debian's setuptools and wheel);
  # deploy_monitoring reads YAML
  python3-pip python3-setuptools python3-wheel python3-yaml
  # deploy/test.sh checks the build warning-free with clang too
  clang
  # deployment tests: systemd-analyze, man pages, ELF inspection; the Debian
  # packages (build, lintian, a fresh root)
  systemd man-db groff-base binutils
  dpkg-dev debhelper dh-python lintian debootstrap
  # security tests: certificates, running as another user
  openssl util-linux
)
# Kubernetes manifest tests run node and npm; Node.js from another source
# brings its own npm, and Debian's npm would conflict with it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deploy/deps.sh: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
echo "deploy/deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
