#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Stand between node daemons and their coordinator, passing every request
and reply through, and list the requests' types.

Usage: nngproxy.py LISTEN_URL COORDINATOR_URL LOG [--older] [--busy-first]

Raw REP and REQ sockets (as nng_device pairs them): several requests in
flight, each reply routed back by its header. One line a request in LOG:
its type, and for node_results and chunks the number of its items and the
request's JSON size in bytes. --older plays a coordinator from before
node_results and chunks: its node_welcome says neither "batches" nor
"files". --busy-first answers the first chunks request itself, as a
coordinator writing as many batched files as it holds at once: every item
PROFD_ELIMIT and busy_ms 100, none taken (logged with "busy"); the node
sends the same files again in a request. libnng through ctypes: no module
to install.
"""
import ctypes
import ctypes.util
import json
import sys
import threading

lib = ctypes.CDLL(ctypes.util.find_library("nng") or "libnng.so.1")


class Socket(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32)]


def check(rv, what):
    if rv != 0:
        lib.nng_strerror.restype = ctypes.c_char_p
        sys.exit(f"nngproxy: {what}: {lib.nng_strerror(rv).decode()}")


lib.nng_listen.argtypes = [Socket, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
lib.nng_dial.argtypes = [Socket, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
lib.nng_recvmsg.argtypes = [Socket, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
lib.nng_sendmsg.argtypes = [Socket, ctypes.c_void_p, ctypes.c_int]
lib.nng_msg_body.argtypes = [ctypes.c_void_p]
lib.nng_msg_body.restype = ctypes.c_void_p
lib.nng_msg_len.argtypes = [ctypes.c_void_p]
lib.nng_msg_len.restype = ctypes.c_size_t
lib.nng_msg_chop.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
lib.nng_msg_append.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
lib.nng_msg_free.argtypes = [ctypes.c_void_p]


def body(msg):
    return ctypes.string_at(lib.nng_msg_body(msg), lib.nng_msg_len(msg))


def forward(src, dst, each):
    """each(msg) returns True when it made msg the reply, sent back to src."""
    while True:
        msg = ctypes.c_void_p()
        if lib.nng_recvmsg(src, ctypes.byref(msg), 0) != 0:
            return
        back = each(msg)
        if lib.nng_sendmsg(src if back else dst, msg, 0) != 0:
            lib.nng_msg_free(msg)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[4])
    older = "--older" in sys.argv[4:]
    busy = ["--busy-first" in sys.argv[4:]]  # still to answer busy
    log = open(sys.argv[3], "a", buffering=1)
    rep, req = Socket(), Socket()
    check(lib.nng_rep0_open_raw(ctypes.byref(rep)), "open rep")
    check(lib.nng_req0_open_raw(ctypes.byref(req)), "open req")
    lib.nng_socket_set_size.argtypes = [Socket, ctypes.c_char_p, ctypes.c_size_t]
    for s in (rep, req):
        check(lib.nng_socket_set_size(s, b"recv-size-max", 0), "recv-size-max")
    check(lib.nng_listen(rep, sys.argv[1].encode(), None, 0), "listen " + sys.argv[1])
    check(lib.nng_dial(req, sys.argv[2].encode(), None, 2), "dial " + sys.argv[2])  # nonblock

    def request(msg):
        text = body(msg).split(b"\0", 1)[0]
        try:
            d = json.loads(text)
        except ValueError:
            log.write("<not json>\n")
            return
        t = d.get("type")
        n = len(d.get("items", []))
        batch = t in ("node_results", "chunks")
        if t == "chunks" and busy[0]:
            busy[0] = False
            log.write(f"{t} {n} {len(text)} busy\n")
            why = "the coordinator is writing 1024 batched files: sent again in 100 ms"
            new = json.dumps({"v": 1, "type": "chunks_reply", "codes": [-13] * n,
                              "messages": [why] * n, "busy_ms": 100}).encode()
            lib.nng_msg_chop(msg, lib.nng_msg_len(msg))
            lib.nng_msg_append(msg, new, len(new))
            return True
        log.write(f"{t} {n} {len(text)}\n" if batch else f"{t}\n")
        return False

    def reply(msg):
        b = body(msg)
        if older and b.startswith(b'{"v":1,"type":"node_welcome"'):
            new = b.replace(b',"batches":true', b"").replace(b',"files":true', b"")
            lib.nng_msg_chop(msg, len(b))
            lib.nng_msg_append(msg, new, len(new))
        return False

    threading.Thread(target=forward, args=(req, rep, reply), daemon=True).start()
    forward(rep, req, request)


if __name__ == "__main__":
    main()
