# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""Send raw requests over one nng REQ connection and print each reply.

Usage: nngreq.py URL REQUEST [REQUEST ...]

Every REQUEST goes over the same socket, from this one process, so that a
worker registered by the first request (a hello) may send the next ones:
the daemon binds a registration to the process that made it. A REQUEST
starting with @ names a file holding it; CLIENT in a request is replaced
by the client id of the last welcome. One line per reply ("<timeout>" when
none came within 10 s). libnng through ctypes: no module to install.
"""
import ctypes
import ctypes.util
import re
import sys

lib = ctypes.CDLL(ctypes.util.find_library("nng") or "libnng.so.1")


class Socket(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint32)]


NNG_FLAG_ALLOC = 1


def check(rv, what):
    if rv != 0:
        lib.nng_strerror.restype = ctypes.c_char_p
        sys.exit(f"nngreq: {what}: {lib.nng_strerror(rv).decode()}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2])
    sock = Socket()
    check(lib.nng_req0_open(ctypes.byref(sock)), "open")
    lib.nng_socket_set_ms.argtypes = [Socket, ctypes.c_char_p, ctypes.c_int32]
    check(lib.nng_socket_set_ms(sock, b"recv-timeout", 10000), "recv-timeout")
    check(lib.nng_socket_set_ms(sock, b"send-timeout", 10000), "send-timeout")
    lib.nng_dial.argtypes = [Socket, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
    check(lib.nng_dial(sock, sys.argv[1].encode(), None, 0), "dial " + sys.argv[1])
    lib.nng_send.argtypes = [Socket, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    lib.nng_recv.argtypes = [Socket, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                             ctypes.c_int]
    client = b"0"
    for req in sys.argv[2:]:
        data = open(req[1:], "rb").read() if req.startswith("@") else req.encode()
        data = data.replace(b"CLIENT", client)
        check(lib.nng_send(sock, data, len(data), 0), "send")
        buf = ctypes.c_void_p()
        size = ctypes.c_size_t()
        rv = lib.nng_recv(sock, ctypes.byref(buf), ctypes.byref(size), NNG_FLAG_ALLOC)
        if rv != 0:
            print("<timeout>", flush=True)
            continue
        reply = ctypes.string_at(buf, size.value)
        m = re.search(rb'"type":"welcome","client":(\d+)', reply)
        if m:
            client = m.group(1)
        print(reply.decode(errors="replace"), flush=True)
        lib.nng_free(buf, size)
    lib.nng_close(sock)


if __name__ == "__main__":
    main()
