#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# deploy/monitoring: the alert rules pass `promtool check rules`, cover
# stalled ranks, failed captures, free disk under the floor and dropped
# events, and are the same in the PrometheusRule of podmonitor.yaml; every
# metric a Grafana panel or a rule uses is one a daemon exports (a live
# scrape of this build's profd). The metrics port of every Kubernetes
# overlay is checked by deploy_k8s (k8s-expect.js).
source "$(dirname "$0")/lib.sh"

mon=$PROFD_SOURCE_DIR/deploy/monitoring
py=/usr/bin/python3
"$py" -c 'import yaml' 2>/dev/null || skip "no python3-yaml"

# ---- the rules ----
if command -v promtool >/dev/null 2>&1; then
  check "promtool check rules profd-alerts.yaml" quiet promtool check rules "$mon/profd-alerts.yaml"
else
  skip "no promtool (deploy/deps.sh prometheus)"
fi
"$py" - "$mon" >"$tmp/rules.txt" 2>&1 <<'PY' || bad "rules: $(cat "$tmp/rules.txt")"
import sys, yaml
mon = sys.argv[1]
def rules(groups):
    return {r["alert"]: (r["expr"], r.get("for")) for g in groups for r in g["rules"]}
own = rules(yaml.safe_load(open(mon + "/profd-alerts.yaml"))["groups"])
docs = list(yaml.safe_load_all(open(mon + "/podmonitor.yaml")))
kinds = sorted(d["kind"] for d in docs)
assert kinds == ["PodMonitor", "PrometheusRule"], kinds
pm = [d for d in docs if d["kind"] == "PodMonitor"][0]
ep = pm["spec"]["podMetricsEndpoints"]
assert [(e["port"], e["path"], e["honorLabels"]) for e in ep] == [("metrics", "/metrics", True)], ep
assert pm["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": "profd"}, pm["spec"]
pr = rules([d for d in docs if d["kind"] == "PrometheusRule"][0]["spec"]["groups"])
assert pr == own, (pr, own)
want = ["ProfdCapturesFailed", "ProfdFreeDiskBelowFloor", "ProfdRanksStalled", "ProfdStepEventsDropped",
        "ProfdWindowErrors"]
assert sorted(own) == want, sorted(own)
print(len(own))
PY
check "the PrometheusRule holds the rules of profd-alerts.yaml, for every condition" \
  test "$(cat "$tmp/rules.txt")" = 5

# ---- the metrics they use, against a scrape ----
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PROFD_PROFD" --run-dir "$tmp/run" --save-path "$tmp/save" --metrics "http://127.0.0.1:$port" \
  --log-level warn >"$tmp/profd.log" 2>&1 &
pids+=($!)
"$py" - "$port" "$mon" >"$tmp/used.txt" 2>&1 <<'PY' || bad "metrics: $(cat "$tmp/used.txt")"
import json, re, sys, time, urllib.request, yaml
port, mon = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 15
while True:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=2).read().decode()
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)
exported = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
exprs = []
dash = json.load(open(mon + "/profd-dashboard.json"))
assert dash["panels"], "no panel"
for p in dash["panels"]:
    assert p.get("targets"), "panel %r has no query" % p.get("title")
    exprs += [t["expr"] for t in p["targets"]]
for g in yaml.safe_load(open(mon + "/profd-alerts.yaml"))["groups"]:
    exprs += [r["expr"] for r in g["rules"]]
used = set()
for e in exprs:
    names = set(re.findall(r"\bprofd_[a-z0-9_]+", e))
    assert names, "a query with no profd metric: %s" % e
    used |= names
missing = sorted(used - exported)
assert not missing, "used but not exported: %s" % missing
print(" ".join(sorted(used)))
PY
check "every metric of the dashboard and the rules is exported ($(wc -w <"$tmp/used.txt") used)" \
  grep -q "profd_save_path_free_bytes" "$tmp/used.txt"
finish
