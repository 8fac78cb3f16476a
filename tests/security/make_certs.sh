#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Test certificates in DIR: ca (the daemon's CA), server (DNS localhost,
# signed by ca), client (signed by ca), other-ca and rogue (a client
# certificate signed by other-ca). EC P-256 keys, one day.
# Usage: make_certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
ossl() { openssl "$@" 2>/dev/null; }
key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
ca() { # NAME
  key "$1"
  ossl req -x509 -new -key "$1.key" -subj "/CN=$1" -days 1 -out "$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
leaf() { # NAME CA EXTENSIONS
  key "$1"
  ossl req -new -key "$1.key" -subj "/CN=$1" -out "$1.csr"
  printf '%s\n' "$3" >"$1.ext"
  ossl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 1 \
    -extfile "$1.ext" -out "$1.pem"
}
ca ca
ca other-ca
leaf server ca "subjectAltName=DNS:localhost
extendedKeyUsage=serverAuth"
leaf client ca "extendedKeyUsage=clientAuth"
leaf rogue other-ca "extendedKeyUsage=clientAuth"
