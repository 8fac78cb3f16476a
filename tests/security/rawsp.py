#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A hostile peer of an nng REP socket, speaking the SP wire protocol itself
(no nng: what it sends is exactly what is written here).

  rawsp.py big URL BYTES N   N connections at once, each sending one request
                             whose length header says BYTES and whose BYTES
                             bytes follow (zeros, streamed: never held here);
                             prints how many connections the daemon cut
  rawsp.py idle URL N SECS   N connections that complete the handshake and
                             then send nothing for SECS seconds; prints how
                             many it opened and how many the daemon closed
                             meanwhile
  rawsp.py tcpidle HOST:PORT N SECS
                             the same with bare TCP connections that send
                             nothing at all (an HTTP port)

URL: ipc://PATH or tcp://HOST:PORT. SP over ipc: the 8-byte header
00 'S' 'P' 00 <protocol, 16 bits> 00 00 each way, then frames of a type byte
(1), a 64-bit big-endian length and the message; over tcp the same without
the type byte. REQ is protocol 48, REP 49; a request begins with its 32-bit
request id (high bit set).
"""
import socket
import struct
import sys
import threading
import time


def connect(url):
    if url.startswith("ipc://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(url[6:])
        ipc = True
    elif url.startswith("tcp://"):
        host, port = url[6:].rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
        ipc = False
    else:
        raise SystemExit("rawsp.py: unsupported URL " + url)
    s.sendall(b"\x00SP\x00" + struct.pack(">H", 48) + b"\x00\x00")
    return s, ipc


def big(url, size, n):
    cut = [0]
    lock = threading.Lock()

    def one():
        try:
            s, ipc = connect(url)
            s.settimeout(30)
            head = struct.pack(">Q", size + 4)
            s.sendall((b"\x01" if ipc else b"") + head + struct.pack(">I", 0x80000001))
            chunk = bytes(1 << 20)
            left = size
            while left > 0:
                k = min(left, len(chunk))
                s.sendall(chunk[:k])
                left -= k
            s.recv(64)  # a reply, or the connection cut
            s.close()
        except OSError:
            with lock:
                cut[0] += 1

    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(cut[0])


def idle(url, n, secs, bare=False):
    socks = []
    for _ in range(n):
        try:
            if bare:
                host, port = url.rsplit(":", 1)
                s = socket.create_connection((host, int(port)), timeout=5)
            else:
                s, _ = connect(url)
            s.setblocking(False)
            socks.append(s)
        except OSError:
            break
    time.sleep(secs)
    closed = 0
    for s in socks:
        try:
            while True:
                if s.recv(4096) == b"":  # the daemon closed it
                    closed += 1
                    break
        except BlockingIOError:
            pass  # still open
        except OSError:
            closed += 1
    print("%d %d" % (len(socks), closed))
    for s in socks:
        s.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "big":
        big(a[1], int(a[2]), int(a[3]))
    elif len(a) == 4 and a[0] == "idle":
        idle(a[1], int(a[2]), float(a[3]))
    elif len(a) == 4 and a[0] == "tcpidle":
        idle(a[1], int(a[2]), float(a[3]), bare=True)
    else:
        raise SystemExit(__doc__)
