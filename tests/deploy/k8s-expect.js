#!/usr/bin/env node
/*
 * What each kustomization of deploy/k8s must render, beyond validity
 * (validate-k8s.js): the interface the daemon, the coordinator and the
 * training pods agree on.
 *
 *   node k8s-expect.js base|coordinator|sidecar RENDERED.yaml
 *
 * Exit status: 0 as expected, 1 otherwise (one line per difference).
 */
"use strict";

const fs = require("fs");
const util = require("util");
const YAML = require("yaml");

const [which, file] = process.argv.slice(2);
const objects = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
const failures = [];

function expect(what, found, wanted) {
  if (!util.isDeepStrictEqual(found, wanted)) {
    failures.push(`${what}: expected ${JSON.stringify(wanted)}, found ${JSON.stringify(found)}`);
  }
}
function get(kind, name) {
  const o = objects.find((x) => x.kind === kind &&
    (x.metadata.name === name || x.metadata.name.startsWith(name + "-")));
  if (!o) {
    failures.push(`no ${kind} ${name}`);
    return null;
  }
  return o;
}
function container(o, name, init) {
  const spec = o.spec.template.spec;
  const c = (init ? spec.initContainers : spec.containers || []).find((x) => x.name === name);
  if (!c) {
    failures.push(`${o.kind} ${o.metadata.name}: no container ${name}`);
  }
  return c || {};
}
function volume(o, name) {
  return (o.spec.template.spec.volumes || []).find((v) => v.name === name) || {};
}
const nodeArgs = ["--config", "/etc/profd/profd.yaml", "--profile-config",
  "/etc/profd/profile.yaml"];

function checkConfig(cm, dataPath) {
  expect("ConfigMap profd-config keys", Object.keys(cm.data).sort(), ["profd.yaml", "profile.yaml"]);
  const cfg = YAML.parse(cm.data["profd.yaml"]);
  expect("profd.yaml save_path is on the data volume",
    String(cfg.save_path).startsWith(dataPath + "/"), true);
  YAML.parse(cm.data["profile.yaml"]);
}

function base(coordinator) {
  const ds = get("DaemonSet", "profd");
  const cm = get("ConfigMap", "profd-config");
  if (!ds || !cm) {
    return;
  }
  const c = container(ds, "profd");
  const args = [...nodeArgs, "--node", "$(NODE_NAME)"];
  if (coordinator) {
    args.push("--coordinator-url", "tcp://profd-coordinator:7710", "--insecure-tcp-links");
  }
  expect("DaemonSet profd args", c.args, args);
  expect("DaemonSet run volume", volume(ds, "run").hostPath,
    { path: "/run/profd", type: "DirectoryOrCreate" });
  expect("DaemonSet data volume", volume(ds, "data").hostPath,
    { path: "/var/lib/profd", type: "DirectoryOrCreate" });
  expect("DaemonSet config volume uses the generated ConfigMap",
    volume(ds, "config").configMap, { name: cm.metadata.name });
  expect("DaemonSet service account", ds.spec.template.spec.serviceAccountName, "profd");
  checkConfig(cm, "/var/lib/profd");
}

function coordinator() {
  base(true);
  const dep = get("Deployment", "profd-coordinator");
  const svc = get("Service", "profd-coordinator");
  if (!dep || !svc) {
    return;
  }
  const c = container(dep, "profd");
  expect("coordinator args", c.args, ["--coordinator", "--coordinator-listen",
    "tcp://0.0.0.0:7710", "--insecure-tcp-links", "--config", "/etc/profd/profd.yaml"]);
  expect("coordinator port", c.ports, [{ name: "coordinator", containerPort: 7710, protocol: "TCP" }]);
  expect("coordinator Service port", svc.spec.ports,
    [{ name: "coordinator", port: 7710, targetPort: "coordinator", protocol: "TCP" }]);
  expect("coordinator runs as non-root", dep.spec.template.spec.securityContext.runAsNonRoot, true);
  expect("coordinator data volume", volume(dep, "data").persistentVolumeClaim,
    { claimName: "profd-coordinator-data" });
}

function sidecar() {
  expect("DaemonSets", objects.filter((o) => o.kind === "DaemonSet").length, 0);
  const job = get("Job", "trainer");
  const cm = get("ConfigMap", "profd-config");
  if (!job || !cm) {
    return;
  }
  const p = container(job, "profd", true);
  const t = container(job, "trainer", false);
  expect("profd is a native sidecar", p.restartPolicy, "Always");
  expect("profd args", p.args, [...nodeArgs, "--node", "$(POD_NAME)"]);
  expect("profd startup probe", p.startupProbe && p.startupProbe.exec.command,
    ["profctl", "--timeout", "1", "status"]);
  expect("sockets volume", volume(job, "profd-run").emptyDir, { medium: "Memory", sizeLimit: "1Mi" });
  const env = Object.fromEntries((t.env || []).map((e) => [e.name, e.value]));
  expect("trainer PROFD_RUN_DIR", env.PROFD_RUN_DIR, "/run/profd");
  expect("trainer mounts", (t.volumeMounts || []).map((m) => [m.name, m.mountPath]),
    [["profd-run", "/run/profd"], ["profd-data", "/var/lib/profd"]]);
  expect("pod runs as non-root", job.spec.template.spec.securityContext.runAsNonRoot, true);
  checkConfig(cm, "/var/lib/profd");
}

const checks = { base: () => base(false), coordinator, sidecar };
if (!checks[which] || !file) {
  process.stderr.write("usage: k8s-expect.js base|coordinator|sidecar RENDERED.yaml\n");
  process.exit(2);
}
checks[which]();
for (const f of failures) {
  process.stderr.write(`k8s-expect: ${which}: ${f}\n`);
}
process.exitCode = failures.length ? 1 : 0;
