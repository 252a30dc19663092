#!/usr/bin/env python3
"""Writes the locked-down homes of the two Syncthing containers of packaging/tests/docker/run.

usage: labconfig.py SYNCTHING DIR  ->  DIR/a and DIR/b, each mounted at /var/syncthing in its container:
    DIR/X/config/{config.xml,cert.pem,key.pem}   from `syncthing generate` (1.x or 2.x: stlab.generate_args),
                                                 config.xml then replaced by Tests/Lab/stlab.py's build_config
                                                 (discovery, relays, NAT, usage reporting, upgrades off); Syncthing
                                                 keeps its database here too once it runs (--home)
    DIR/X/<folder>                               the one shared folder, at /var/syncthing/<folder> in both
Both containers share one loopback-only network namespace: A has its GUI on 0.0.0.0:8384 (as the official image)
and listens on 22000, B uses 127.0.0.1:8385 and 22001. Prints a JSON document with the IDs, keys and names.
Everything is chowned to 1000:1000, the image's user. Standard library only.
"""

import json
import os
import secrets
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests", "Lab"))
import stlab  # noqa: E402

UID = GID = 1000


def main() -> int:
    syncthing, base = sys.argv[1], sys.argv[2]
    # Distinctive names, so the log check can tell a leak from an ordinary word.
    folder = "fld-" + secrets.token_hex(4)
    version = stlab.syncthing_version(syncthing)
    nodes = {"a": {"gui": "0.0.0.0:8384", "listen": 22000}, "b": {"gui": "127.0.0.1:8385", "listen": 22001}}
    for key, n in nodes.items():
        home = os.path.join(base, key, "config")
        os.makedirs(home, mode=0o700)
        os.makedirs(os.path.join(base, key, folder, ".stfolder"))
        subprocess.run([syncthing] + stlab.generate_args(version, home),
                       env={"PATH": "/usr/bin:/bin", "HOME": home}, check=True, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=60)
        root = ET.parse(os.path.join(home, "config.xml")).getroot()
        n["id"], n["version"] = root.find("device").get("id"), root.get("version")
        n["api_key"] = "lab-apikey-" + secrets.token_hex(12)
    for key, n in nodes.items():
        peer = nodes["b" if key == "a" else "a"]
        xml = stlab.build_config(
            name=key.upper(), device_id=n["id"], listen_port=n["listen"], gui_port=0, api_key=n["api_key"],
            peer_name=("B" if key == "a" else "A"), peer_id=peer["id"], peer_listen_port=peer["listen"],
            folders={folder: f"/var/syncthing/{folder}"}, config_version=n["version"])
        xml = xml.replace(b"<address>127.0.0.1:0</address>", f"<address>{n['gui']}</address>".encode())
        with open(os.path.join(base, key, "config", "config.xml"), "wb") as f:
            f.write(xml)
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), UID, GID)
    os.chown(base, UID, GID)
    json.dump({"folder": folder, "nodes": nodes}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
