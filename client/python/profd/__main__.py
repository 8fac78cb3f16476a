# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""python -m profd doctor: whether profd works in this interpreter, and why
not where it does not.

  drop-in    is profd-auto.pth in a folder this interpreter reads .pth files
             from (site-packages), and is PROFD_AUTO (or PROFD_VERL,
             PROFD_MINDSPEED, PROFD_MEGATRON) on; a package found through
             PYTHONPATH only gets the command that activates it
  libprofd   which file was loaded, or every place tried and why not
  speedups   profd._speedups (the C step scope) or why the ctypes path
  daemon     the worker socket the client would register with, and whether
             something listens there

Exit status 0 when the library loads and a daemon listens, else 1."""
import os
import site
import sys

from . import _native

PTH = "profd-auto.pth"
SWITCHES = ("PROFD_AUTO", "PROFD_VERL", "PROFD_MINDSPEED", "PROFD_MEGATRON")


def _on(v):
    return v is not None and v.strip().lower() not in ("", "0", "false", "no", "off")


def site_dirs():
    """The folders whose .pth files this interpreter read at start-up."""
    dirs = []
    if sys.flags.no_site:
        return dirs
    try:
        dirs += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site.py
        pass
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [os.path.realpath(d) for d in dirs]


def drop_in():
    """(ok, lines): where the drop-in's .pth is and whether it is active."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = site_dirs()
    where = [d for d in dirs if os.path.isfile(os.path.join(d, PTH))]
    on = [v for v in SWITCHES if _on(os.environ.get(v))]
    lines = []
    if not where:
        beside = os.path.join(pkg, PTH)
        lines.append("drop-in: not installed: no %s in this interpreter's site folders (%s)" % (
            PTH, ", ".join(dirs) or "none: python -S"))
        if os.path.realpath(pkg) not in dirs:
            # a PYTHONPATH or build-tree package: Python reads .pth files only
            # from site folders
            lines.append("  profd is imported from %s, which Python reads no .pth file from "
                         "(PYTHONPATH)" % pkg)
            target = dirs[0] if dirs else "SITE-PACKAGES"
            src = beside if os.path.isfile(beside) else PTH
            lines.append("  to activate it: cp %s %s/   (or pip install the package)" % (src, target))
        return False, lines
    lines.append("drop-in: installed: %s" % os.path.join(where[0], PTH))
    if on:
        lines.append("  active: %s set, so it profiles this interpreter's jobs" % ", ".join(
            "%s=%s" % (v, os.environ[v]) for v in on))
        return True, lines
    lines.append("  not active: set PROFD_AUTO=1 (or PROFD_VERL=1, PROFD_MINDSPEED=1, PROFD_MEGATRON=1)")
    return False, lines


def worker_url():
    """(url, how) as libprofd chooses it (client/rundir.c): PROFD_URL, else
    the worker socket of $PROFD_RUN_DIR, /run/profd or /tmp/profd-UID."""
    url = os.environ.get("PROFD_URL")
    if url:
        return url, "PROFD_URL"
    env = os.environ.get("PROFD_RUN_DIR", "")
    if env.startswith("/") and len(env) <= 94:
        return "ipc://%s/worker.sock" % env, "PROFD_RUN_DIR"
    dirs = ["/run/profd", "/tmp/profd-%d" % os.getuid()]
    for d in dirs:
        if os.path.exists(os.path.join(d, "worker.sock")):
            return "ipc://%s/worker.sock" % d, "the socket found in %s" % d
    d = dirs[0] if os.path.isdir(dirs[0]) and os.access(dirs[0], os.X_OK) else dirs[1]
    return "ipc://%s/worker.sock" % d, "no socket in %s: the default" % " or ".join(dirs)


def _listening_unix(path):
    """Whether a socket listens at `path`, from /proc/net/unix: without
    connecting. A connection closed before nng's handshake makes nng 1.5.2's
    listener (Debian 12's) stop accepting: nanomsg/nng#1518, fixed in 1.6.0
    by nanomsg/nng#1519; a health check must not be that connection."""
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            parts = line.split()
            # Num RefCount Protocol Flags Type St Inode Path; Flags 00010000: accepting
            if len(parts) >= 8 and parts[7] == path and int(parts[3], 16) & 0x10000:
                return True
    return False


def reach(url):
    """None when a daemon listens at url, else why not. Nothing connects."""
    if not url.startswith("ipc://"):
        return "not checked: %s (only ipc:// is, without connecting)" % url.split("://")[0]
    path = url[len("ipc://"):]
    try:
        st = os.stat(path)
    except OSError as e:
        return e.strerror
    import stat
    if not stat.S_ISSOCK(st.st_mode):
        return "%s is not a socket" % path
    try:
        if not _listening_unix(os.path.realpath(path)) and not _listening_unix(path):
            return "no daemon listens there (a socket file left behind)"
    except OSError:
        pass  # no /proc: the socket file is all there is to see
    if not os.access(path, os.R_OK | os.W_OK):
        return "permission denied (the socket's mode or group: security.socket_group)"
    return None


def doctor(out=sys.stdout):
    from . import __version__

    ok = True
    print("profd %s: %s (Python %s, %s)" % (
        __version__, os.path.dirname(os.path.abspath(__file__)), sys.version.split()[0], sys.executable), file=out)
    active, lines = drop_in()
    for line in lines:
        print(line, file=out)
    lib = _native.load()
    if lib is None:
        ok = False
        print("libprofd: not loaded: %s" % _native.load_error(), file=out)
    else:
        print("libprofd: %s" % os.path.realpath(lib.path) if "/" in lib.path else "libprofd: %s (the dynamic linker's)" % lib.path, file=out)
        why = _native.speedups_error()
        print("speedups: %s" % (why or "profd._speedups (the C step scope)"), file=out)
    url, how = worker_url()
    why = reach(url)
    if why is None:
        print("daemon: %s (%s): listening" % (url, how), file=out)
    else:
        ok = False
        print("daemon: %s (%s): not reachable: %s" % (url, how, why), file=out)
        print("  start one (profd), or point PROFD_URL / PROFD_RUN_DIR at it", file=out)
    return 0 if ok else 1


def main(argv):
    if argv[1:2] == ["doctor"] and len(argv) == 2:
        return doctor()
    print("usage: python -m profd doctor", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
