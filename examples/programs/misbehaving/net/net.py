#!/usr/bin/env python3
"""Chang-Roberts that looks for the network: its init tries a TCP connection to 127.0.0.1:9 and a
DNS lookup of example.com (each given 300 ms) and keeps what happened in the state, as
`state["net"] = {"tcp": ..., "dns": ...}`: "connected" / "resolved", or "error <ERRNO name>: ...",
or "timeout". `"reached": true` when either got through (a TCP refusal counts: packets flowed)."""
import errno
import socket
import sys
import threading

import os

# The correct Chang-Roberts of examples/programs/chang-roberts, with one way of misbehaving on top.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "chang-roberts"))
import chang_roberts as cr  # noqa: E402


def tcp():
    try:
        with socket.create_connection(("127.0.0.1", 9), timeout=0.3):
            return "connected"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return f"error {errno.errorcode.get(e.errno, e.errno)}: {e.strerror}"


def dns():
    result = ["timeout"]

    def look():
        try:
            socket.getaddrinfo("example.com", 80)
            result[0] = "resolved"
        except OSError as e:
            result[0] = f"error {e.errno}: {e}"

    t = threading.Thread(target=look, daemon=True)
    t.start()
    t.join(0.3)
    return result[0]


base = cr.init


def init(node):
    state, name = base(node)
    net = {"tcp": tcp(), "dns": dns()}
    net["reached"] = net["tcp"] == "connected" or "ECONNREFUSED" in net["tcp"] or net["dns"] == "resolved"
    print(f"net: {net}", file=sys.stderr, flush=True)
    state["net"] = net
    return state, name


cr.init = init
cr.main()
