#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Offline validation of Kubernetes manifests (a YAML stream from
 * `kubectl kustomize`, or plain files).
 *
 *   node validate-k8s.js [--list] FILE|- ...
 *
 * Every object must be well-formed YAML, of a known apiVersion and kind, and
 * valid against the Kubernetes JSON schema of its kind (kubernetes-models).
 * On top of the schema, the checks the API server or the kubelet would only
 * make at deploy time: unique objects, container and volume names; volume
 * mounts of declared volumes; selectors that match their pod template;
 * ConfigMaps, claims, service accounts and Service ports that exist in the
 * same set; claims and PersistentVolumes that name each other agree; $(VAR)
 * references to defined variables.
 *
 * Pod Security: every Namespace in the set carries its enforced level
 * (pod-security.kubernetes.io/enforce), and every pod template in a
 * namespace with the level "baseline" or "restricted" -- from its Namespace
 * object, or from --level NAMESPACE=LEVEL for namespaces made elsewhere --
 * passes that level's published rules (pss.js), as admission would check
 * the pods.
 *
 * And the rules of profd's own deployment: a profd container has exec
 * probes running `profctl status`, cpu and memory requests and limits, no
 * privilege escalation, a read-only root file system, no capability it does
 * not drop or list, and PROFD_RUN_DIR set to where its sockets are mounted;
 * a profd DaemonSet selects its nodes; a container that shares a profd
 * volume mounts it at the same path, and one that shares the sockets names
 * them with PROFD_RUN_DIR; a worker that dials a tls+tcp:// PROFD_URL names
 * its CA, certificate and key in a volume it mounts read-only.
 *
 * Exit status: 0 valid, 1 invalid (one line per problem on stderr), 2 usage.
 * --list prints "Kind namespace/name" per object on stdout.
 * Needs the npm packages `yaml` and `kubernetes-models` (NODE_PATH).
 */
"use strict";

const fs = require("fs");
const path = require("path");
const YAML = require("yaml");
const pss = require(path.join(__dirname, "pss.js"));

const problems = [];
function problem(where, msg) {
  problems.push(`${where}: ${msg}`);
}

function modelClass(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string") {
    return null;
  }
  // "v1" is the core group; "apps/v1", "networking.k8s.io/v1" others.
  const mod = "kubernetes-models/" + apiVersion;
  let m;
  try {
    m = require(mod);
  } catch (e) {
    if (e.code === "MODULE_NOT_FOUND" || e.code === "ERR_PACKAGE_PATH_NOT_EXPORTED") {
      return null;
    }
    throw e;
  }
  return typeof m[kind] === "function" ? m[kind] : null;
}

function objName(o) {
  const md = (o && o.metadata) || {};
  return `${o && o.kind}/${md.namespace ? md.namespace + "/" : ""}${md.name}`;
}

/* ---- pod templates ---- */

function podSpecOf(o) {
  const spec = o.spec || {};
  switch (o.kind) {
    case "Pod":
      return { pod: spec, labels: (o.metadata || {}).labels || {},
        annotations: (o.metadata || {}).annotations || {}, selector: null };
    case "Deployment":
    case "DaemonSet":
    case "StatefulSet":
    case "ReplicaSet":
    case "Job": {
      const t = spec.template || {};
      return {
        pod: t.spec || {},
        labels: (t.metadata || {}).labels || {},
        annotations: (t.metadata || {}).annotations || {},
        selector: spec.selector ? spec.selector.matchLabels || {} : null,
      };
    }
    case "CronJob": {
      const t = ((spec.jobTemplate || {}).spec || {}).template || {};
      return { pod: t.spec || {}, labels: (t.metadata || {}).labels || {},
        annotations: (t.metadata || {}).annotations || {}, selector: null };
    }
    default:
      return null;
  }
}

function allContainers(pod) {
  return [...(pod.initContainers || []), ...(pod.containers || [])];
}

function isProfd(c) {
  return typeof c.image === "string" && /^(.*\/)?profd(:|@|$)/.test(c.image) &&
    !(c.command && c.command.length);
}

function envValue(c, name) {
  const e = (c.env || []).find((v) => v.name === name);
  return e ? e.value : undefined;
}

function checkPod(where, o, t, index, level) {
  const pod = t.pod;
  const containers = allContainers(pod);
  const volumes = new Map();
  for (const v of pod.volumes || []) {
    if (volumes.has(v.name)) {
      problem(where, `volume '${v.name}' declared twice`);
    }
    volumes.set(v.name, v);
  }
  const names = new Set();
  for (const c of containers) {
    const cw = `${where}: container '${c.name}'`;
    if (names.has(c.name)) {
      problem(where, `container name '${c.name}' used twice`);
    }
    names.add(c.name);
    const paths = new Set();
    for (const m of c.volumeMounts || []) {
      if (!volumes.has(m.name)) {
        problem(cw, `mounts volume '${m.name}', which the pod does not declare`);
      }
      if (paths.has(m.mountPath)) {
        problem(cw, `two volumes mounted at ${m.mountPath}`);
      }
      paths.add(m.mountPath);
    }
    const defined = new Set((c.env || []).map((v) => v.name));
    for (const s of [...(c.command || []), ...(c.args || [])]) {
      for (const ref of String(s).matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
        if (!defined.has(ref[1])) {
          problem(cw, `'${s}' refers to $(${ref[1]}), which its env does not define`);
        }
      }
    }
    for (const e of c.env || []) {
      const ref = e.valueFrom && e.valueFrom.configMapKeyRef;
      if (ref && !ref.optional && !index.has(`ConfigMap/${o.metadata.namespace}/${ref.name}`)) {
        problem(cw, `env ${e.name} uses ConfigMap '${ref.name}', not in this set`);
      }
    }
  }
  if (t.selector) {
    for (const [k, v] of Object.entries(t.selector)) {
      if (t.labels[k] !== v) {
        problem(where, `selector ${k}=${v} does not match the pod template labels`);
      }
    }
  }
  const ns = o.metadata.namespace;
  for (const v of volumes.values()) {
    if (v.configMap && !v.configMap.optional &&
        !index.has(`ConfigMap/${ns}/${v.configMap.name}`)) {
      problem(where, `volume '${v.name}' uses ConfigMap '${v.configMap.name}', not in this set`);
    }
    if (v.persistentVolumeClaim &&
        !index.has(`PersistentVolumeClaim/${ns}/${v.persistentVolumeClaim.claimName}`)) {
      problem(where, `volume '${v.name}' uses claim '${v.persistentVolumeClaim.claimName}', ` +
        "not in this set");
    }
  }
  const sa = pod.serviceAccountName;
  if (sa && sa !== "default" && !index.has(`ServiceAccount/${ns}/${sa}`)) {
    problem(where, `service account '${sa}' is not in this set`);
  }
  if (level) {
    for (const r of pss.check(pod, t.annotations, level)) {
      problem(where, `violates PodSecurity "${level}:latest" of namespace ${ns}: ${r}`);
    }
  }
  checkProfdPod(where, o, containers, volumes);
}

/* ---- profd's own rules ---- */

function checkProbe(cw, c, kind) {
  const p = c[kind];
  const cmd = p && p.exec && p.exec.command;
  if (!Array.isArray(cmd) || cmd[0] !== "profctl" || cmd[cmd.length - 1] !== "status") {
    problem(cw, `${kind} must run 'profctl ... status' (exec)`);
  }
}

function checkProfdPod(where, o, containers, volumes) {
  const daemons = containers.filter(isProfd);
  // mount path of each volume in the profd container(s), and the sockets'
  let runVolume = null;
  const shared = new Map();
  for (const c of daemons) {
    const cw = `${where}: profd container '${c.name}'`;
    checkProbe(cw, c, "readinessProbe");
    checkProbe(cw, c, "livenessProbe");
    const r = c.resources || {};
    const req = r.requests || {};
    const lim = r.limits || {};
    if (req.cpu === undefined || req.memory === undefined) {
      problem(cw, "needs cpu and memory requests");
    }
    if (lim.cpu === undefined || lim.memory === undefined) {
      problem(cw, "needs cpu and memory limits");
    }
    const sc = c.securityContext || {};
    if (sc.allowPrivilegeEscalation !== false) {
      problem(cw, "must set allowPrivilegeEscalation: false");
    }
    if (sc.readOnlyRootFilesystem !== true) {
      problem(cw, "must set readOnlyRootFilesystem: true");
    }
    if (sc.privileged) {
      problem(cw, "must not be privileged");
    }
    const caps = sc.capabilities || {};
    if (!(caps.drop || []).includes("ALL")) {
      problem(cw, "must drop ALL capabilities");
    }
    const allowed = ["CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER"];
    for (const a of caps.add || []) {
      if (!allowed.includes(a)) {
        problem(cw, `adds capability ${a}; profd needs at most ${allowed.join(", ")}`);
      }
    }
    const runDir = envValue(c, "PROFD_RUN_DIR");
    const runMount = (c.volumeMounts || []).find((m) => m.mountPath === runDir);
    if (runDir === undefined || runMount === undefined) {
      problem(cw, "must set PROFD_RUN_DIR to the mount path of its socket volume");
    } else {
      runVolume = runMount.name;
    }
    for (const m of c.volumeMounts || []) {
      if (!m.readOnly) {
        shared.set(m.name, m.mountPath);
      }
    }
  }
  if (daemons.length && o.kind === "DaemonSet") {
    const pod = o.spec.template.spec;
    const affinity = ((pod.affinity || {}).nodeAffinity || {})
      .requiredDuringSchedulingIgnoredDuringExecution;
    if (Object.keys(pod.nodeSelector || {}).length === 0 && !affinity) {
      problem(where, "a profd DaemonSet must select the nodes it runs on (nodeSelector)");
    }
  }
  for (const c of containers) {
    if (daemons.includes(c)) {
      continue;
    }
    const cw = `${where}: container '${c.name}'`;
    for (const m of c.volumeMounts || []) {
      if (shared.has(m.name) && shared.get(m.name) !== m.mountPath) {
        problem(cw, `mounts profd volume '${m.name}' at ${m.mountPath}, not at ` +
          `${shared.get(m.name)} as profd does`);
      }
      if (m.name === runVolume && envValue(c, "PROFD_RUN_DIR") !== m.mountPath) {
        problem(cw, `shares the profd sockets: set PROFD_RUN_DIR=${m.mountPath}`);
      }
    }
    // a worker of a node daemon over TLS: its files in a volume it mounts
    const url = envValue(c, "PROFD_URL");
    if (typeof url === "string" && url.startsWith("tls+")) {
      for (const v of ["PROFD_TLS_CA", "PROFD_TLS_CERT", "PROFD_TLS_KEY"]) {
        const file = envValue(c, v);
        const m = file && (c.volumeMounts || []).find((x) => file.startsWith(x.mountPath + "/"));
        if (!m) {
          problem(cw, `dials ${url}: ${v} must name a file in a volume it mounts`);
        } else if (!m.readOnly) {
          problem(cw, `dials ${url}: the volume of ${v} ('${m.name}') must be mounted readOnly`);
        }
      }
    }
  }
}

/* ---- Services ---- */

function checkService(where, o, pods) {
  const sel = (o.spec || {}).selector;
  if (!sel || o.spec.type === "ExternalName") {
    return;
  }
  const matched = pods.filter((p) =>
    p.namespace === o.metadata.namespace &&
    Object.entries(sel).every(([k, v]) => p.labels[k] === v));
  if (matched.length === 0) {
    problem(where, "selector matches no pod template in this set");
    return;
  }
  for (const port of o.spec.ports || []) {
    if (typeof port.targetPort !== "string") {
      continue;
    }
    const found = matched.some((p) => allContainers(p.pod).some((c) =>
      (c.ports || []).some((cp) => cp.name === port.targetPort)));
    if (!found) {
      problem(where, `targetPort '${port.targetPort}' names no container port of its pods`);
    }
  }
}

/* ---- main ---- */

function checkVolumes(index) {
  for (const o of index.values()) {
    if (o.kind === "PersistentVolumeClaim" && o.spec.volumeName) {
      const pv = index.get(`PersistentVolume/undefined/${o.spec.volumeName}`);
      if (!pv) {
        continue; // made elsewhere
      }
      const ref = pv.spec.claimRef || {};
      if (ref.name !== o.metadata.name || ref.namespace !== o.metadata.namespace) {
        problem(objName(o), `volumeName ${o.spec.volumeName}: that PersistentVolume is ` +
          `reserved for ${ref.namespace}/${ref.name}`);
      }
      if ((pv.spec.storageClassName || "") !== (o.spec.storageClassName || "")) {
        problem(objName(o), `storageClassName differs from PersistentVolume ${pv.metadata.name}'s`);
      }
    }
  }
}

function main(argv) {
  let list = false;
  const files = [];
  const levels = new Map();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--list") {
      list = true;
    } else if (a === "--level") {
      const m = /^([a-z0-9-]+)=([a-z]+)$/.exec(argv[++i] || "");
      if (!m || !pss.LEVELS.includes(m[2])) {
        process.stderr.write(`validate-k8s: --level NAMESPACE=${pss.LEVELS.join("|")}\n`);
        return 2;
      }
      levels.set(m[1], m[2]);
    } else if (a.startsWith("--")) {
      process.stderr.write(`validate-k8s: unknown option ${a}\n`);
      return 2;
    } else {
      files.push(a);
    }
  }
  if (files.length === 0) {
    process.stderr.write("usage: validate-k8s.js [--list] [--level NAMESPACE=LEVEL]... FILE|- ...\n");
    return 2;
  }
  const objects = [];
  for (const f of files) {
    const text = fs.readFileSync(f === "-" ? 0 : f, "utf8");
    const docs = YAML.parseAllDocuments(text, { prettyErrors: false });
    docs.forEach((d, i) => {
      const where = `${f}: document ${i + 1}`;
      if (d.errors.length) {
        for (const e of d.errors) {
          problem(where, `YAML: ${e.message.split("\n")[0]}`);
        }
        return;
      }
      const o = d.toJS({ maxAliasCount: 100 });
      if (o === null || o === undefined) {
        return;
      }
      if (typeof o !== "object" || Array.isArray(o)) {
        problem(where, "not a Kubernetes object");
        return;
      }
      objects.push({ o, where });
    });
  }
  const index = new Map();
  for (const { o, where } of objects) {
    const Model = modelClass(o.apiVersion, o.kind);
    if (Model === null) {
      problem(where, `unknown apiVersion '${o.apiVersion}' and kind '${o.kind}'`);
      continue;
    }
    if (!o.metadata || typeof o.metadata.name !== "string" || o.metadata.name === "") {
      problem(where, `${o.kind} without metadata.name`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (e) {
      const errs = e.errors || [{ instancePath: "", message: e.message }];
      for (const err of errs) {
        // oneOf/anyOf summaries repeat the detailed errors before them
        if (err.keyword === "oneOf" || err.keyword === "anyOf") {
          continue;
        }
        problem(objName(o), `${err.instancePath || "/"} ${err.message}`);
      }
    }
    const key = `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
    if (index.has(key)) {
      problem(objName(o), "defined twice");
    }
    index.set(key, o);
  }
  for (const o of index.values()) {
    if (o.kind !== "Namespace") {
      continue;
    }
    const level = (o.metadata.labels || {})["pod-security.kubernetes.io/enforce"];
    if (!pss.LEVELS.includes(level)) {
      problem(objName(o), "must set its Pod Security level (label " +
        `pod-security.kubernetes.io/enforce: ${pss.LEVELS.join(" | ")})`);
    } else if (levels.has(o.metadata.name) && levels.get(o.metadata.name) !== level) {
      problem(objName(o), `enforces ${level}, not ${levels.get(o.metadata.name)} (--level)`);
    } else {
      levels.set(o.metadata.name, level);
    }
  }
  checkVolumes(index);
  const pods = [];
  for (const o of index.values()) {
    const t = podSpecOf(o);
    if (t) {
      checkPod(objName(o), o, t, index, levels.get(o.metadata.namespace));
      pods.push({ namespace: o.metadata.namespace, labels: t.labels, pod: t.pod });
    }
  }
  for (const o of index.values()) {
    if (o.kind === "Service") {
      checkService(objName(o), o, pods);
    }
  }
  if (list) {
    for (const o of index.values()) {
      const md = o.metadata;
      process.stdout.write(`${o.kind} ${md.namespace || "-"}/${md.name}\n`);
    }
  }
  for (const p of problems) {
    process.stderr.write(`validate-k8s: ${p}\n`);
  }
  return problems.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
