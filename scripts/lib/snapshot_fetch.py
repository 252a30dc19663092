#!/usr/bin/env python3
"""Downloads one Debian source package at an exact version from snapshot.debian.org, for scripts/static-deps when
the machine's Debian mirror no longer serves a pinned version (the archive keeps only the newest security update).

    snapshot_fetch.py PACKAGE VERSION DSC_SHA256 DEST_DIR

Uses snapshot's machine-readable API: GET <base>/mr/package/<package>/<version>/srcfiles?fileinfo=1 lists the
package's files by SHA-1 with their names; each file is then GET <base>/file/<sha1>. Every file's SHA-1 is checked
against the hash it was asked for, and the .dsc's SHA-256 against DSC_SHA256, the pin recorded in scripts/static-deps
when the version was fetched, signature-verified, from the Debian archive. dpkg-source then checks the tarballs
against the .dsc's own checksums. So the trust anchor is the pinned .dsc hash, not the snapshot service.

Base URL: $VAULTSYNC_DEBIAN_SNAPSHOT_URL, default https://snapshot.debian.org. Exit 0 on success, 1 with one line
on stderr otherwise. Python standard library only.
"""

import hashlib
import json
import os
import sys
import urllib.parse
import urllib.request

TIMEOUT_SECONDS = 120
MAX_FILE_BYTES = 256 << 20  # the largest orig tarball here (openssl) is about 50 MB
MAX_INDEX_BYTES = 1 << 20


def fetch(url: str, limit: int) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
        body = response.read(limit + 1)
    if len(body) > limit:
        raise ValueError(f"more than {limit} bytes")
    return body


def source_files(index: dict) -> dict:
    """Maps file name -> SHA-1 from a srcfiles?fileinfo=1 answer; raises ValueError when it is malformed."""
    if not isinstance(index, dict) or not isinstance(index.get("result", []), list):
        raise ValueError("the file index is not a srcfiles answer")
    files = {}
    for entry in index.get("result", []):
        sha1 = entry.get("hash", "") if isinstance(entry, dict) else ""
        if len(sha1) != 40 or any(c not in "0123456789abcdef" for c in sha1):
            raise ValueError("a file hash is not a SHA-1")
        infos = index.get("fileinfo", {}).get(sha1, []) if isinstance(index.get("fileinfo"), dict) else []
        names = {i.get("name", "") if isinstance(i, dict) else "" for i in infos}
        if len(names) != 1:
            raise ValueError("a file has no single name")
        name = names.pop()
        if not name or "/" in name or name.startswith("."):
            raise ValueError("a file name is not a plain name")
        files[name] = sha1
    if not any(n.endswith(".dsc") for n in files):
        raise ValueError("no .dsc among the files")
    return files


def main(argv: list) -> int:
    if len(argv) != 5:
        print("usage: snapshot_fetch.py PACKAGE VERSION DSC_SHA256 DEST_DIR", file=sys.stderr)
        return 64
    package, version, dsc_sha256, dest = argv[1:]
    base = os.environ.get("VAULTSYNC_DEBIAN_SNAPSHOT_URL", "https://snapshot.debian.org").rstrip("/")
    quote = urllib.parse.quote
    try:
        index = json.loads(
            fetch(f"{base}/mr/package/{quote(package, safe='')}/{quote(version, safe='')}/srcfiles?fileinfo=1",
                  MAX_INDEX_BYTES))
        files = source_files(index)
        os.makedirs(dest, exist_ok=True)
        for name, sha1 in sorted(files.items()):
            body = fetch(f"{base}/file/{sha1}", MAX_FILE_BYTES)
            if hashlib.sha1(body).hexdigest() != sha1:
                raise ValueError(f"{name} does not match its SHA-1")
            if name.endswith(".dsc") and hashlib.sha256(body).hexdigest() != dsc_sha256:
                raise ValueError(f"{name} does not match the SHA-256 pinned in scripts/static-deps")
            with open(os.path.join(dest, name), "wb") as out:
                out.write(body)
    except (OSError, ValueError, json.JSONDecodeError) as error:
        print(f"snapshot_fetch: {package} {version}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
