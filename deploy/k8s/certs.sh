#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Certificates for deploy/k8s (node/, coordinator/, training/), made with
# openssl into one folder, and the kubectl command that puts each set in
# the Secret the manifests mount.
#
#   deploy/k8s/certs.sh [-d DIR] ca                 the two CAs (once)
#   deploy/k8s/certs.sh [-d DIR] node               Secret profd-node-tls (namespace profd)
#   deploy/k8s/certs.sh [-d DIR] coordinator        Secret profd-coordinator-tls (profd)
#   deploy/k8s/certs.sh [-d DIR] operator NAME      NAME.pem/.key for profctl
#   deploy/k8s/certs.sh [-d DIR] job NAME [NS]      Secret profd-job-NAME (NS, default training)
#
# DIR defaults to ./profd-pki. Two CAs, so that what a job holds is worth
# nothing outside the node daemons' worker endpoint:
#   ops-ca   signs the node daemons, the coordinator and the operators'
#            profctl certificates; the coordinator trusts it alone.
#   jobs-ca  signs one client certificate per job; the node daemons trust it
#            (with ops-ca) on their worker endpoint.
# The CA keys stay in DIR: keep it off the cluster. Certificates name DNS
# names (this nng does not match IP addresses) and last 365 days (-days N
# through $PROFD_CERT_DAYS).
set -euo pipefail

dir=./profd-pki
if [ "${1:-}" = "-d" ]; then
  dir=$2
  shift 2
fi
days=${PROFD_CERT_DAYS:-365}
usage() {
  sed -n '8,12p' "$0" | sed 's/^# *//' >&2
  exit 2
}
[ $# -ge 1 ] || usage
command -v openssl >/dev/null || { echo "certs.sh: openssl not found" >&2; exit 1; }
mkdir -p -m 0700 "$dir"

# keys readable by their owner only; certificates by everyone
key() { (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$1.key" 2>/dev/null); }
ca() { # NAME
  [ -f "$dir/$1.pem" ] && return
  key "$1"
  openssl req -x509 -new -key "$dir/$1.key" -subj "/CN=$1" -days "$days" -out "$dir/$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
}
cert() { # NAME CA EXTENSIONS [CN, default NAME]
  [ -f "$dir/$2.pem" ] || { echo "certs.sh: no $dir/$2.pem: run '$0 -d $dir ca' first" >&2; exit 1; }
  key "$1"
  openssl req -new -key "$dir/$1.key" -subj "/CN=${4:-$1}" -out "$dir/$1.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$1.csr" -CA "$dir/$2.pem" -CAkey "$dir/$2.key" -CAcreateserial \
    -days "$days" -extfile <(printf '%b' "$3") -out "$dir/$1.pem" 2>/dev/null
  rm -f "$dir/$1.csr"
  echo "$dir/$1.pem, $dir/$1.key: signed by $2"
}
secret() { # NAMESPACE SECRET CA-FILE NAME
  echo "kubectl -n $1 create secret generic $2 --from-file=ca.pem=$3" \
    "--from-file=tls.crt=$dir/$4.pem --from-file=tls.key=$dir/$4.key"
}

case $1 in
ca)
  ca ops-ca
  ca jobs-ca
  echo "$dir/ops-ca.pem: operators' CA (node daemons, coordinator, profctl)"
  echo "$dir/jobs-ca.pem: jobs' CA (workers)"
  ;;
node)
  cert node ops-ca "subjectAltName=DNS:profd-node.profd.svc,DNS:profd-node.profd,DNS:profd-node\nextendedKeyUsage=serverAuth,clientAuth"
  cat "$dir/ops-ca.pem" "$dir/jobs-ca.pem" >"$dir/node-ca.pem"
  secret profd profd-node-tls "$dir/node-ca.pem" node
  ;;
coordinator)
  cert coordinator ops-ca "subjectAltName=DNS:profd-coordinator.profd.svc,DNS:profd-coordinator.profd,DNS:profd-coordinator\nextendedKeyUsage=serverAuth,clientAuth"
  secret profd profd-coordinator-tls "$dir/ops-ca.pem" coordinator
  ;;
operator)
  [ $# -eq 2 ] || usage
  cert "$2" ops-ca "extendedKeyUsage=clientAuth"
  echo "profctl --url tls+tcp://profd-coordinator.profd.svc:7711 --tls-ca $dir/ops-ca.pem" \
    "--tls-cert $dir/$2.pem --tls-key $dir/$2.key status"
  ;;
job)
  [ $# -ge 2 ] || usage
  # its common name is the job's name: with security.job_certificates the
  # node daemons let it register ranks of that job only
  cert "job-$2" jobs-ca "extendedKeyUsage=clientAuth" "$2"
  # the job verifies the node daemons' certificate: ops-ca signed it
  secret "${3:-training}" "profd-job-$2" "$dir/ops-ca.pem" "job-$2"
  ;;
*)
  usage
  ;;
esac
