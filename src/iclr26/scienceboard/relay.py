"""Relay a listening Unix socket to a TCP port on the sandbox's own loopback (run by the system Python
inside an app's sandbox, stdlib only): `python3 relay.py FD PORT`.

An app's control port (PyMOL's XML-RPC, Stellarium's RemoteControl) listens on 127.0.0.1 in the app's
private network namespace, where no host process can reach it. The harness opens a Unix socket in a
folder only it can enter and hands the listening descriptor FD to this relay, which forwards each
connection to 127.0.0.1:PORT: the harness reaches the port, nobody else does.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy `src` to `dst` until `src` ends, then end `dst`'s writing side."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _serve(client: socket.socket, port: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        client.close()  # the app is not listening yet: the harness retries
        return
    upstream.settimeout(None)
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main() -> None:
    listener = socket.socket(fileno=int(sys.argv[1]))
    port = int(sys.argv[2])
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, port), daemon=True).start()


if __name__ == "__main__":
    main()
