// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The Pod Security Standards ("baseline" and "restricted", version latest)
 * as Pod Security Admission enforces them, for a pod spec, offline:
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/
 *
 *   const pss = require("./pss");
 *   pss.check(podSpec, podAnnotations, "restricted") -> ["reason", ...]
 *
 * Each reason names the control as admission does ("allowPrivilegeEscalation
 * != false", "hostPath volumes", ...) and the containers or volumes at
 * fault. "privileged" returns nothing. Windows pods are not covered.
 */
"use strict";

const LEVELS = ["privileged", "baseline", "restricted"];

// Baseline: capabilities a container may add.
const BASELINE_CAPS = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID",
  "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
// Baseline: the safe sysctls.
const SAFE_SYSCTLS = new Set(["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"]);
// Baseline: SELinux types.
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t",
  "container_engine_t"]);
// Restricted: the volume types allowed.
const RESTRICTED_VOLUMES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
  "persistentVolumeClaim", "projected", "secret"]);
const VOLUME_FIELDS = ["hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs",
  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs",
  "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte",
  "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos",
  "csi", "ephemeral", "emptyDir", "secret", "image"];

function containersOf(pod) {
  return [...(pod.initContainers || []), ...(pod.containers || []),
    ...(pod.ephemeralContainers || [])];
}

function names(list) {
  return list.map((n) => `"${n}"`).join(", ");
}

function baseline(pod, annotations, out) {
  const cs = containersOf(pod);
  const psc = pod.securityContext || {};
  const sc = (c) => c.securityContext || {};

  const hostProcess = cs.filter((c) => (sc(c).windowsOptions || {}).hostProcess === true)
    .map((c) => c.name);
  if ((psc.windowsOptions || {}).hostProcess === true || hostProcess.length) {
    out.push("hostProcess (pod or containers " + names(hostProcess) +
      " must not set securityContext.windowsOptions.hostProcess=true)");
  }
  const ns = ["hostNetwork", "hostPID", "hostIPC"].filter((k) => pod[k] === true);
  if (ns.length) {
    out.push(`host namespaces (${ns.map((k) => k + "=true").join(", ")})`);
  }
  const priv = cs.filter((c) => sc(c).privileged === true).map((c) => c.name);
  if (priv.length) {
    out.push(`privileged (containers ${names(priv)} must not set securityContext.privileged=true)`);
  }
  const capsOut = [];
  for (const c of cs) {
    const extra = ((sc(c).capabilities || {}).add || []).filter((a) => !BASELINE_CAPS.has(a));
    if (extra.length) {
      capsOut.push(`"${c.name}" adds ${extra.join(", ")}`);
    }
  }
  if (capsOut.length) {
    out.push(`non-default capabilities (${capsOut.join("; ")})`);
  }
  const hp = (pod.volumes || []).filter((v) => v.hostPath).map((v) => v.name);
  if (hp.length) {
    out.push(`hostPath volumes (volumes ${names(hp)})`);
  }
  const ports = [];
  for (const c of cs) {
    for (const p of c.ports || []) {
      if (p.hostPort) {
        ports.push(`"${c.name}" uses hostPort ${p.hostPort}`);
      }
    }
  }
  if (ports.length) {
    out.push(`hostPort (${ports.join("; ")})`);
  }
  const aa = [];
  for (const [k, v] of Object.entries(annotations || {})) {
    if (k.startsWith("container.apparmor.security.beta.kubernetes.io/") &&
        v !== "runtime/default" && !String(v).startsWith("localhost/")) {
      aa.push(`annotation ${k}="${v}"`);
    }
  }
  const aaType = (s) => s && s.appArmorProfile && !["RuntimeDefault", "Localhost"]
    .includes(s.appArmorProfile.type);
  if (aaType(psc)) {
    aa.push(`pod appArmorProfile.type=${psc.appArmorProfile.type}`);
  }
  for (const c of cs) {
    if (aaType(sc(c))) {
      aa.push(`"${c.name}" appArmorProfile.type=${sc(c).appArmorProfile.type}`);
    }
  }
  if (aa.length) {
    out.push(`forbidden AppArmor profiles (${aa.join("; ")})`);
  }
  const se = [];
  const seBad = (o) => o && ((o.type !== undefined && !SELINUX_TYPES.has(o.type)) ||
    o.user !== undefined || o.role !== undefined);
  if (seBad(psc.seLinuxOptions)) {
    se.push("pod");
  }
  for (const c of cs) {
    if (seBad(sc(c).seLinuxOptions)) {
      se.push(`"${c.name}"`);
    }
  }
  if (se.length) {
    out.push(`seLinuxOptions (${se.join(", ")} set a forbidden type, user or role)`);
  }
  const pm = cs.filter((c) => sc(c).procMount !== undefined && sc(c).procMount !== "Default")
    .map((c) => c.name);
  if (pm.length) {
    out.push(`procMount (containers ${names(pm)} must not set securityContext.procMount)`);
  }
  const unconf = [];
  if ((psc.seccompProfile || {}).type === "Unconfined") {
    unconf.push("pod");
  }
  for (const c of cs) {
    if ((sc(c).seccompProfile || {}).type === "Unconfined") {
      unconf.push(`"${c.name}"`);
    }
  }
  if (unconf.length) {
    out.push(`seccompProfile (${unconf.join(", ")} must not set seccompProfile.type to "Unconfined")`);
  }
  const sys = (psc.sysctls || []).map((s) => s.name).filter((n) => !SAFE_SYSCTLS.has(n));
  if (sys.length) {
    out.push(`forbidden sysctls (${sys.join(", ")})`);
  }
}

function restricted(pod, out) {
  const cs = containersOf(pod);
  const psc = pod.securityContext || {};
  const sc = (c) => c.securityContext || {};

  const bad = [];
  for (const v of pod.volumes || []) {
    const type = VOLUME_FIELDS.find((f) => v[f] !== undefined && v[f] !== null);
    if (type !== undefined && !RESTRICTED_VOLUMES.has(type)) {
      bad.push(`"${v.name}" uses ${type}`);
    }
  }
  if (bad.length) {
    out.push(`restricted volume types (${bad.join("; ")})`);
  }
  const esc = cs.filter((c) => sc(c).allowPrivilegeEscalation !== false).map((c) => c.name);
  if (esc.length) {
    out.push(`allowPrivilegeEscalation != false (containers ${names(esc)} must set ` +
      "securityContext.allowPrivilegeEscalation=false)");
  }
  const podNonRoot = psc.runAsNonRoot === true;
  const explicitRoot = cs.filter((c) => sc(c).runAsNonRoot === false).map((c) => c.name);
  const unset = cs.filter((c) => sc(c).runAsNonRoot === undefined).map((c) => c.name);
  if (psc.runAsNonRoot === false || explicitRoot.length || (!podNonRoot && unset.length)) {
    const parts = [];
    if (psc.runAsNonRoot === false) {
      parts.push("pod must not set securityContext.runAsNonRoot=false");
    }
    if (explicitRoot.length) {
      parts.push(`containers ${names(explicitRoot)} must not set securityContext.runAsNonRoot=false`);
    }
    if (!podNonRoot && unset.length) {
      parts.push(`pod or containers ${names(unset)} must set securityContext.runAsNonRoot=true`);
    }
    out.push(`runAsNonRoot != true (${parts.join("; ")})`);
  }
  const root = [];
  if (psc.runAsUser === 0) {
    root.push("pod");
  }
  for (const c of cs) {
    if (sc(c).runAsUser === 0) {
      root.push(`"${c.name}"`);
    }
  }
  if (root.length) {
    out.push(`runAsUser=0 (${root.join(", ")} must not set runAsUser=0)`);
  }
  const okType = (s) => s && ["RuntimeDefault", "Localhost"].includes((s.seccompProfile || {}).type);
  if (!okType(psc)) {
    const missing = cs.filter((c) => !okType(sc(c))).map((c) => c.name);
    if (missing.length) {
      out.push(`seccompProfile (pod or containers ${names(missing)} must set ` +
        'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    }
  }
  const nodrop = cs.filter((c) => !((sc(c).capabilities || {}).drop || []).includes("ALL"))
    .map((c) => c.name);
  const adds = [];
  for (const c of cs) {
    const extra = ((sc(c).capabilities || {}).add || []).filter((a) => a !== "NET_BIND_SERVICE");
    if (extra.length) {
      adds.push(`"${c.name}" must not include ${extra.join(", ")} in securityContext.capabilities.add`);
    }
  }
  if (nodrop.length || adds.length) {
    const parts = [];
    if (nodrop.length) {
      parts.push(`containers ${names(nodrop)} must set securityContext.capabilities.drop=["ALL"]`);
    }
    out.push(`unrestricted capabilities (${[...parts, ...adds].join("; ")})`);
  }
}

function check(pod, annotations, level) {
  if (!LEVELS.includes(level)) {
    throw new Error(`unknown Pod Security level '${level}'`);
  }
  const out = [];
  if (level !== "privileged") {
    baseline(pod || {}, annotations, out);
  }
  if (level === "restricted") {
    restricted(pod || {}, out);
  }
  return out;
}

module.exports = { LEVELS, check };
