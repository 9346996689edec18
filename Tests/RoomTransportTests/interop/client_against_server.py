"""Drives a Clubroom WebSocket echo server with the `websockets` client.

Usage: client_against_server.py URL [CA_FILE]
Prints one line per check and "ALL OK" at the end; exits 1 on the first failed check.
The server echoes messages and, on "close CODE REASON", closes with that code.
"""

import ssl
import sys

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

URL = sys.argv[1]
CONTEXT = ssl.create_default_context(cafile=sys.argv[2]) if URL.startswith("wss://") else None


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL {name} {detail}", flush=True)
        sys.exit(1)
    print(f"ok {name}", flush=True)


def open_connection():
    return connect(URL, ssl=CONTEXT, open_timeout=30, close_timeout=30, max_size=None)


with open_connection() as ws:
    ws.send("héllo ✓")
    check("text", ws.recv(timeout=30) == "héllo ✓")
    ws.send(b"\x00\x01\xff")
    check("binary", ws.recv(timeout=30) == b"\x00\x01\xff")
    ws.send(["frag", "ment", "ed"])
    check("fragmented text", ws.recv(timeout=30) == "fragmented")
    ws.send([b"\x01", b"\x02\x03"])
    check("fragmented binary", ws.recv(timeout=30) == b"\x01\x02\x03")
    check("ping answered", ws.ping(b"abc").wait(30))
    ws.send("close 4001 custom reason")
    try:
        ws.recv(timeout=30)
        check("server close", False, "no close")
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd else None
        reason = closed.rcvd.reason if closed.rcvd else None
        check("server close", (code, reason) == (4001, "custom reason"), f"{code} {reason}")

with open_connection() as ws:
    ws.send("x" * 70000)
    try:
        ws.recv(timeout=30)
        check("oversize", False, "no close")
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd else None
        check("oversize closes with 1009", code == 1009, f"{code}")

with open_connection() as ws:
    ws.send("last")
    check("echo before client close", ws.recv(timeout=30) == "last")
    ws.close(4005, "py bye")
    check("client close acknowledged", ws.protocol.close_rcvd is not None and ws.protocol.close_rcvd.code == 4005)

print("ALL OK", flush=True)
