#!/usr/bin/env python3
"""A throwaway test CA and one server certificate, made at run time with the ``openssl`` CLI.

Used by the relay stand-in's https tests and by the end-to-end test of the static binary
(Tests/EndToEndTests). Nothing it writes is meant to be kept: the keys live in the directory the
caller gives (a temporary one) and never in git.

    python3 Tests/Lab/testca.py --dir DIR [--dns-name relay.vaultsync.test [--dns-name other.test ...]]

writes into DIR:

* ``ca.pem``          the CA certificate (what a client must trust)
* ``server.pem``      the server certificate, signed by the CA, for the DNS name(s) (subjectAltName)
* ``server-key.pem``  the server's private key

The CA's own key is deleted once the server certificate is signed. Keys are P-256; both
certificates are valid from now for two days.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

DEFAULT_DNS_NAME = "relay.vaultsync.test"

CA_CERT = "ca.pem"
SERVER_CERT = "server.pem"
SERVER_KEY = "server-key.pem"

_KEY_ARGS = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


def _openssl(*args: str):
    subprocess.run(["openssl", *args], check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make(directory: str, dns_name: str | list[str] = DEFAULT_DNS_NAME) -> dict[str, str]:
    """Write the CA certificate, the server certificate and its key into *directory*.

    *dns_name* is one name or a list (one certificate for several host names, the first is the CN).

    Returns their paths as ``{"ca": ..., "cert": ..., "key": ...}``. Raises
    ``subprocess.CalledProcessError`` when openssl fails and ``FileNotFoundError`` when it is missing.
    """
    names = [dns_name] if isinstance(dns_name, str) else list(dns_name)
    os.makedirs(directory, exist_ok=True)
    paths = {name: os.path.join(directory, file)
             for name, file in (("ca", CA_CERT), ("cert", SERVER_CERT), ("key", SERVER_KEY))}
    with tempfile.TemporaryDirectory(dir=directory, prefix=".ca-") as work:
        ca_key = os.path.join(work, "ca-key.pem")
        csr = os.path.join(work, "server.csr")
        ext = os.path.join(work, "server.ext")
        _openssl("req", "-x509", *_KEY_ARGS, "-keyout", ca_key, "-out", paths["ca"], "-days", "2",
                 "-subj", "/CN=vaultsync-notify test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        _openssl("req", *_KEY_ARGS, "-keyout", paths["key"], "-out", csr, "-subj", f"/CN={names[0]}")
        with open(ext, "w", encoding="ascii") as f:
            f.write("subjectAltName=" + ",".join(f"DNS:{n}" for n in names) + "\n"
                    "basicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature\n"
                    "extendedKeyUsage=serverAuth\n")
        _openssl("x509", "-req", "-in", csr, "-CA", paths["ca"], "-CAkey", ca_key, "-set_serial",
                 str(int.from_bytes(os.urandom(8), "big")), "-days", "2", "-extfile", ext,
                 "-out", paths["cert"])
    return paths


def main(argv=None) -> int:
    """CLI entry point; returns the exit status."""
    p = argparse.ArgumentParser(description="Make a throwaway test CA and a server certificate.")
    p.add_argument("--dir", required=True, help="directory to write ca.pem, server.pem, server-key.pem")
    p.add_argument("--dns-name", action="append",
                   help=f"the server certificate's DNS name; repeat for more (default {DEFAULT_DNS_NAME})")
    args = p.parse_args(argv)
    try:
        make(args.dir, args.dns_name or DEFAULT_DNS_NAME)
    except FileNotFoundError:
        print("testca: the openssl command is missing (scripts/install-deps installs it)", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"testca: openssl failed: {exc.stderr.decode(errors='replace').strip()}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
