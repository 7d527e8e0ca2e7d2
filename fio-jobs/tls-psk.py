#!/usr/bin/env python3
"""A configured NVMe/TCP TLS PSK for the kit's +tls targets, in the interchange format
(NVMeTLSkey-1:01:<base64 of key || CRC-32>:, no newline, as SPDK's keyring_file takes it).

usage: tls-psk.py HOSTNQN SUBNQN [--key HEX] [--tls-psk]
  --key HEX   this 32-byte key instead of a random one (a test vector)
  --tls-psk   print the TLS PSK derived for HOSTNQN and SUBNQN (hex) instead of the configured key

SPDK's host (lib/nvme/nvme_tcp.c) opens the TLS socket only if the TLS PSK it derives does not start with
a zero byte (`if (tcp_ctrlr->psk[0])`), so one random key in 256 would make spdk_nvme_perf connect without
TLS and fail: such keys are drawn again. The derivation is the NVMe/TCP specification's with RFC 8446's
HKDF-Expand-Label, as SPDK's host does it and as nvmf4j's TlsPsk (Derivation.RFC8446) does: retained PSK =
HKDF-Expand-Label(HKDF-Extract(0, key), "HostNQN", hostnqn, 32); TLS PSK =
HKDF-Expand-Label(HKDF-Extract(0, retained), "nvme-tls-psk", "NVMe0R01 <hostnqn> <subnqn>", 32); SHA-256.
"""
import base64
import hashlib
import hmac
import os
import struct
import sys
import zlib


def expand_label(secret, label, context):
    prk = hmac.new(bytes(32), secret, hashlib.sha256).digest()
    full = b"tls13 " + label
    info = (32).to_bytes(2, "big") + bytes([len(full)]) + full + bytes([len(context)]) + context
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()  # L = 32: one block


def tls_psk(key, host, sub):
    retained = expand_label(key, b"HostNQN", host.encode())
    return expand_label(retained, b"nvme-tls-psk", ("NVMe0R01 %s %s" % (host, sub)).encode())


def main(argv):
    args = list(argv)
    show = "--tls-psk" in args
    if show:
        args.remove("--tls-psk")
    key = None
    if "--key" in args:
        i = args.index("--key")
        try:
            key = bytes.fromhex(args[i + 1])
        except (IndexError, ValueError):
            sys.stderr.write("tls-psk.py: --key needs 64 hex digits (32 bytes)\n")
            return 2
        del args[i:i + 2]
    if key is not None and len(key) != 32:
        sys.stderr.write("tls-psk.py: --key needs 64 hex digits (32 bytes), got %d bytes\n" % len(key))
        return 2
    if len(args) != 2:
        sys.stderr.write(__doc__)
        return 2
    host, sub = args
    while key is None:
        k = os.urandom(32)
        if tls_psk(k, host, sub)[0] != 0:
            key = k
    if show:
        print(tls_psk(key, host, sub).hex())
    else:
        sys.stdout.write("NVMeTLSkey-1:01:" + base64.b64encode(key + struct.pack("<I", zlib.crc32(key))).decode() + ":")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
