"""Free TCP ports on 127.0.0.1 for the scripts' servers and emulators."""

import random
import socket


# Below Linux's ephemeral range (32768-60999 by default), from which the
# kernel picks both `bind(0)` ports and every outgoing connection's local
# port: a port found with bind(0) and handed to an emulator a moment later
# could meanwhile become some connection's local port, and the emulator's
# runtime API would not be listening there (1 cold start in 340 failed so).
PICK_FROM = range(20000, 32768)


def free_ports(n):
    """n distinct free ports, below the ephemeral range. All n sockets stay
    bound until every port is picked: closing each before the next bind
    would let the same port be picked twice (an RIE told to serve
    invocations and the runtime API on one port then refuses its own
    bootstrap)."""
    socks = []
    try:
        for port in random.sample(PICK_FROM, len(PICK_FROM)):
            if len(socks) == n:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        if len(socks) < n:
            raise OSError(f"fewer than {n} free ports in {PICK_FROM}")
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
