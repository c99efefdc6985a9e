"""Free TCP ports on 127.0.0.1 for the scripts' servers and emulators."""

import socket


def free_ports(n):
    """n distinct free ports. All n sockets stay bound until every port is
    picked: closing each before the next bind lets the kernel hand out the
    same port twice (an RIE told to serve invocations and the runtime API on
    one port then refuses its own bootstrap)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
