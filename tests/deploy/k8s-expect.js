#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What each kustomization of deploy/k8s must render, beyond validity
 * (validate-k8s.js): the interface the daemons, the coordinator and the
 * training pods agree on.
 *
 *   node k8s-expect.js base|sidecar|node|coordinator RENDERED.yaml
 *   node k8s-expect.js training RENDERED.yaml NODE-RENDERED.yaml
 *
 * (training is checked against what node/ renders: the Service its workers
 * dial, the spool folder its claim must reach.)
 * Exit status: 0 as expected, 1 otherwise (one line per difference).
 */
"use strict";

const fs = require("fs");
const path = require("path");
const util = require("util");
const YAML = require("yaml");
const pss = require(path.join(__dirname, "pss.js"));

const [which, file, nodeFile] = process.argv.slice(2);
const load = (f) => YAML.parseAllDocuments(fs.readFileSync(f, "utf8")).map((d) => d.toJS());
const failures = [];

function expect(what, found, wanted) {
  if (!util.isDeepStrictEqual(found, wanted)) {
    failures.push(`${what}: expected ${JSON.stringify(wanted)}, found ${JSON.stringify(found)}`);
  }
}
function get(objects, kind, name) {
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
  const c = ((init ? spec.initContainers : spec.containers) || []).find((x) => x.name === name);
  if (!c) {
    failures.push(`${o.kind} ${o.metadata.name}: no container ${name}`);
  }
  return c || {};
}
function volume(o, name) {
  return (o.spec.template.spec.volumes || []).find((v) => v.name === name) || {};
}
function mountPath(c, name) {
  const m = (c.volumeMounts || []).find((x) => x.name === name);
  return m ? m.mountPath : undefined;
}
function env(c) {
  return Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
}
function config(cm, key) {
  if (!cm || !cm.data || cm.data[key] === undefined) {
    failures.push(`ConfigMap profd-config: no ${key}`);
    return {};
  }
  return YAML.parse(cm.data[key]) || {};
}
function under(p, dir) {
  return typeof p === "string" && p.startsWith(dir + "/");
}
// every daemon serves its metrics on the pod's port "metrics" (deploy/monitoring)
const metricsPort = { name: "metrics", containerPort: 9464, protocol: "TCP" };
const metricsUrl = "http://0.0.0.0:9464";
const prometheusIngress = {
  from: [{ namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } }],
  ports: [{ port: 9464, protocol: "TCP" }] };
const nodeArgs = ["--config", "/etc/profd/profd.yaml", "--profile-config",
  "/etc/profd/profile.yaml"];
const objects = load(file);

function base() {
  expect("objects", objects.map((o) => o.kind), ["ConfigMap"]);
  const cm = get(objects, "ConfigMap", "profd-config");
  if (!cm) {
    return;
  }
  expect("ConfigMap profd-config keys", Object.keys(cm.data).sort(), ["profd.yaml", "profile.yaml"]);
  expect("profd.yaml save_path", config(cm, "profd.yaml").save_path, "/var/lib/profd/profile");
  expect("profd.yaml metrics endpoint", (config(cm, "profd.yaml").listen || {}).metrics, metricsUrl);
  YAML.parse(cm.data["profile.yaml"]);
}

function sidecar() {
  expect("DaemonSets", objects.filter((o) => o.kind === "DaemonSet").length, 0);
  expect("every object in namespace training",
    objects.filter((o) => o.metadata.namespace !== "training").map((o) => o.kind), []);
  const job = get(objects, "Job", "trainer");
  const cm = get(objects, "ConfigMap", "profd-config");
  if (!job || !cm) {
    return;
  }
  const p = container(job, "profd", true);
  const t = container(job, "trainer", false);
  expect("profd is a native sidecar", p.restartPolicy, "Always");
  expect("profd metrics port", p.ports, [metricsPort]);
  expect("profd args", p.args, [...nodeArgs, "--node", "$(POD_NAME)"]);
  expect("profd startup probe", p.startupProbe && p.startupProbe.exec.command,
    ["profctl", "--timeout", "1", "status"]);
  expect("sockets volume", volume(job, "profd-run").emptyDir, { medium: "Memory", sizeLimit: "1Mi" });
  expect("trainer PROFD_RUN_DIR", env(t).PROFD_RUN_DIR, "/run/profd");
  expect("trainer mounts", (t.volumeMounts || []).map((m) => [m.name, m.mountPath]),
    [["profd-run", "/run/profd"], ["profd-data", "/var/lib/profd"]]);
  expect("pod runs as non-root", job.spec.template.spec.securityContext.runAsNonRoot, true);
  expect("the pod passes the restricted level", pss.check(job.spec.template.spec, {}, "restricted"), []);
  expect("profd.yaml save_path is on the data volume",
    under(config(cm, "profd.yaml").save_path, "/var/lib/profd"), true);
}

// node/: returns what training/ and coordinator/ check against
function node(withCoordinator) {
  const ns = get(objects, "Namespace", "profd");
  const ds = get(objects, "DaemonSet", "profd");
  const svc = get(objects, "Service", "profd-node");
  const cm = get(objects, "ConfigMap", "profd-config");
  const np = get(objects, "NetworkPolicy", "profd-node");
  if (!ns || !ds || !svc || !cm || !np) {
    return null;
  }
  expect("namespace profd enforces", ns.metadata.labels["pod-security.kubernetes.io/enforce"],
    "privileged");
  const pod = ds.spec.template.spec;
  const c = container(ds, "profd");
  const args = [...nodeArgs, "--node", "$(NODE_NAME)"];
  if (withCoordinator) {
    args.push("--coordinator-url", "tls+tcp://profd-coordinator.profd.svc:7710");
  }
  expect("DaemonSet profd args", c.args, args);
  expect("DaemonSet nodeSelector", pod.nodeSelector, { "profd/node": "true" });
  expect("DaemonSet tolerations", pod.tolerations,
    [{ operator: "Exists", effect: "NoSchedule" }, { operator: "Exists", effect: "PreferNoSchedule" }]);
  expect("DaemonSet worker and metrics ports", c.ports,
    [{ name: "worker", containerPort: 7712, protocol: "TCP" }, metricsPort]);
  expect("DaemonSet sockets volume", volume(ds, "run").emptyDir, { medium: "Memory", sizeLimit: "1Mi" });
  expect("DaemonSet data volume", volume(ds, "data").hostPath,
    { path: "/var/lib/profd", type: "DirectoryOrCreate" });
  expect("DaemonSet TLS volume", volume(ds, "tls").secret,
    { secretName: "profd-node-tls", defaultMode: 0o400 });
  expect("DaemonSet config volume uses the generated ConfigMap",
    volume(ds, "config").configMap, { name: cm.metadata.name });
  expect("DaemonSet service account", pod.serviceAccountName, "profd");
  expect("host namespaces and host ports", [pod.hostNetwork, pod.hostPID, pod.hostIPC,
    (c.ports || []).some((p) => p.hostPort)], [undefined, undefined, undefined, false]);
  expect("Service profd-node", { itp: svc.spec.internalTrafficPolicy, ports: svc.spec.ports,
    selector: svc.spec.selector }, { itp: "Local",
    ports: [{ name: "worker", port: 7712, targetPort: "worker", protocol: "TCP" }],
    selector: ds.spec.selector.matchLabels });
  expect("NetworkPolicy profd-node", np.spec.ingress, [{
    from: [{ namespaceSelector: { matchLabels: { "profd/training": "true" } } }],
    ports: [{ port: 7712, protocol: "TCP" }] }, prometheusIngress]);
  const cfg = config(cm, "profd.yaml");
  const data = mountPath(c, "data");
  const tls = mountPath(c, "tls");
  expect("node profd.yaml worker endpoint", (cfg.listen || {}).worker, "tls+tcp://0.0.0.0:7712");
  expect("node profd.yaml metrics endpoint", (cfg.listen || {}).metrics, metricsUrl);
  expect("node save_path and spool_dir on the data volume",
    [under(cfg.save_path, data), under(cfg.spool_dir, data)], [true, true]);
  expect("node tls files in the TLS volume", cfg.tls, { ca_file: `${tls}/ca.pem`,
    cert_file: `${tls}/tls.crt`, key_file: `${tls}/tls.key` });
  return { url: `tls+tcp://${svc.metadata.name}.${svc.metadata.namespace}.svc:${svc.spec.ports[0].port}`,
    spool: cfg.spool_dir };
}

function training() {
  if (!nodeFile) {
    failures.push("training needs node/'s rendering as its third argument");
    return;
  }
  const nodeObjects = load(nodeFile);
  const svc = get(nodeObjects, "Service", "profd-node");
  const cm = get(nodeObjects, "ConfigMap", "profd-config");
  const ns = get(objects, "Namespace", "training");
  const pv = get(objects, "PersistentVolume", "profd-spool-training");
  const pvc = get(objects, "PersistentVolumeClaim", "profd-spool");
  const job = get(objects, "Job", "trainer");
  if (!svc || !cm || !ns || !pv || !pvc || !job) {
    return;
  }
  const url = `tls+tcp://${svc.metadata.name}.${svc.metadata.namespace}.svc:${svc.spec.ports[0].port}`;
  const spool = (YAML.parse(cm.data["profd.yaml"]) || {}).spool_dir;
  expect("namespace training labels", ns.metadata.labels, {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest", "profd/training": "true" });
  expect("the PersistentVolume is the node daemon's spool folder", pv.spec.hostPath,
    { path: spool, type: "Directory" });
  expect("PersistentVolume reserved for training/profd-spool", pv.spec.claimRef,
    { namespace: "training", name: "profd-spool" });
  expect("claim bound to it", [pvc.spec.volumeName, pvc.spec.storageClassName],
    [pv.metadata.name, pv.spec.storageClassName]);
  const pod = job.spec.template.spec;
  const t = container(job, "trainer");
  const e = env(t);
  const secretMount = mountPath(t, "profd-tls");
  expect("trainer PROFD_URL is the node daemons' Service", e.PROFD_URL, url);
  expect("trainer TLS files from the job's Secret", [e.PROFD_TLS_CA, e.PROFD_TLS_CERT,
    e.PROFD_TLS_KEY], [`${secretMount}/ca.pem`, `${secretMount}/tls.crt`, `${secretMount}/tls.key`]);
  expect("the job's Secret", volume(job, "profd-tls").secret,
    { secretName: "profd-job-trainer", defaultMode: 0o440 });
  expect("trainer mounts the spool where the daemon has it", mountPath(t, "profd-spool"), spool);
  expect("spool volume is the claim", volume(job, "profd-spool").persistentVolumeClaim,
    { claimName: "profd-spool" });
  expect("no host folder in the training pod", (pod.volumes || []).filter((v) => v.hostPath), []);
  expect("the pod passes the restricted level", pss.check(pod, {}, "restricted"), []);
}

function coordinator() {
  node(true);
  const dep = get(objects, "Deployment", "profd-coordinator");
  const svc = get(objects, "Service", "profd-coordinator");
  const cm = get(objects, "ConfigMap", "profd-config");
  const np = get(objects, "NetworkPolicy", "profd-coordinator");
  if (!dep || !svc || !cm || !np) {
    return;
  }
  const c = container(dep, "profd");
  expect("coordinator args", c.args, ["--coordinator", "--config", "/etc/profd/coordinator.yaml"]);
  expect("coordinator ports", c.ports, [
    { name: "coordinator", containerPort: 7710, protocol: "TCP" },
    { name: "control", containerPort: 7711, protocol: "TCP" }, metricsPort]);
  expect("coordinator Service ports", svc.spec.ports, [
    { name: "coordinator", port: 7710, targetPort: "coordinator", protocol: "TCP" },
    { name: "control", port: 7711, targetPort: "control", protocol: "TCP" }]);
  expect("ConfigMap keys", Object.keys(cm.data).sort(),
    ["coordinator.yaml", "profd.yaml", "profile.yaml"]);
  const cfg = config(cm, "coordinator.yaml");
  const tls = mountPath(c, "tls");
  expect("coordinator links and remote control over mutual TLS",
    [(cfg.coordinator || {}).listen, (cfg.listen || {}).control_remote],
    ["tls+tcp://0.0.0.0:7710", "tls+tcp://0.0.0.0:7711"]);
  expect("coordinator metrics endpoint", (cfg.listen || {}).metrics, metricsUrl);
  expect("coordinator tls files in the TLS volume", cfg.tls, { ca_file: `${tls}/ca.pem`,
    cert_file: `${tls}/tls.crt`, key_file: `${tls}/tls.key` });
  expect("coordinator TLS volume", volume(dep, "tls").secret,
    { secretName: "profd-coordinator-tls", defaultMode: 0o400 });
  expect("coordinator data volume", volume(dep, "data").persistentVolumeClaim,
    { claimName: "profd-coordinator-data" });
  expect("save_path on the data volume", under(cfg.save_path, mountPath(c, "data")), true);
  expect("the coordinator passes the restricted level",
    pss.check(dep.spec.template.spec, {}, "restricted"), []);
  expect("node daemons dial the coordinator's Service", `tls+tcp://${svc.metadata.name}.` +
    `${svc.metadata.namespace}.svc:${svc.spec.ports[0].port}`,
    "tls+tcp://profd-coordinator.profd.svc:7710");
  expect("NetworkPolicy profd-coordinator", np.spec.ingress, [
    { from: [{ podSelector: { matchLabels: get(objects, "DaemonSet", "profd").spec.selector.matchLabels } }],
      ports: [{ port: 7710, protocol: "TCP" }] },
    { ports: [{ port: 7711, protocol: "TCP" }] }, prometheusIngress]);
}

const checks = { base, sidecar, node: () => node(false), training, coordinator };
if (!checks[which] || !file) {
  process.stderr.write("usage: k8s-expect.js base|sidecar|node|training|coordinator RENDERED.yaml " +
    "[NODE-RENDERED.yaml]\n");
  process.exit(2);
}
checks[which]();
for (const f of failures) {
  process.stderr.write(`k8s-expect: ${which}: ${f}\n`);
}
process.exitCode = failures.length ? 1 : 0;
