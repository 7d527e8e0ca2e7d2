#!/usr/bin/env python3
"""free_port.py [EXCLUDED...] : prints a TCP port that is free now on every address.

The port lies below the kernel's ephemeral range (net.ipv4.ip_local_port_range), where the kernel never hands
out a port by itself: a port from bind(("", 0)) lies inside that range, and once the probing socket is closed
any outgoing connection on the machine may take it as its source port before the caller binds it. Here only
another explicit bind of the same number can. Ports given as arguments are never printed.
"""
import random
import socket
import sys

LOWEST = 10000


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
        return low if low > LOWEST + 1000 else 32768
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(excluded=()):
    top = ephemeral_low() - 1
    for _ in range(200):
        port = random.randint(LOWEST, top)
        if port in excluded:
            continue
        with socket.socket() as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        return port
    raise SystemExit("free_port.py: no free TCP port between %d and %d" % (LOWEST, top))


if __name__ == "__main__":
    bad = [a for a in sys.argv[1:] if not a.isdigit()]
    if bad:
        print("free_port.py: usage: free_port.py [EXCLUDED...]: excluded ports are numbers, not %r" % bad[0],
              file=sys.stderr)
        sys.exit(2)
    print(free_port({int(a) for a in sys.argv[1:]}))
