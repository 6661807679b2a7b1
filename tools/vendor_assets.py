"""Copies the inspector's and GraphiQL's browser libraries out of their npm packages into graph/assets/vendor/, each
package's licence text beside them (`<package>@<version>.LICENSE`), and writes manifest.json: for each file its npm
package, version and licence (the package.json `license`, and the licence file), its path in the package tarball,
the tarball's integrity and the file's sha256. `--check` fetches the same packages again and fails if any vendored
file differs.

    python tools/vendor_assets.py            # (re)vendor
    python tools/vendor_assets.py --check    # compare with the registry's tarballs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "graph" / "assets" / "vendor"

FILES = {
    "preact.mjs": ("preact@11.2.0", "package/dist/preact.mjs"),
    "preact-hooks.mjs": ("preact@11.2.0", "package/hooks/dist/hooks.mjs"),
    "htm.mjs": ("htm@3.1.1", "package/dist/htm.mjs"),
    "react.production.min.js": ("react@18.3.1", "package/umd/react.production.min.js"),
    "react-dom.production.min.js": ("react-dom@18.3.1", "package/umd/react-dom.production.min.js"),
    "graphiql.min.js": ("graphiql@3.8.3", "package/graphiql.min.js"),
    "graphiql.min.css": ("graphiql@3.8.3", "package/graphiql.min.css"),
    "uPlot.esm.js": ("uplot@1.6.32", "package/dist/uPlot.esm.js"),
    "uPlot.min.css": ("uplot@1.6.32", "package/dist/uPlot.min.css"),
    "graphql-ws.min.js": ("graphql-ws@6.4.2", "package/umd/graphql-ws.min.js"),
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(spec: str, into: Path) -> tuple[Path, str]:
    """The package's tarball from the registry, and its integrity string."""
    out = subprocess.run(["npm", "pack", spec, "--json", "--pack-destination", str(into)],
                         check=True, capture_output=True, text=True).stdout
    info = json.loads(out)[0]
    return into / info["filename"], info["integrity"]


LICENCE = "package/LICENSE"
LICENCES = {"graphql-ws@6.4.2": "package/LICENSE.md"}


def licence_file(spec: str) -> str:
    return f"{spec}.LICENSE"


def from_registry() -> dict[str, tuple[bytes, dict]]:
    files: dict[str, tuple[bytes, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tarballs = {spec: fetch(spec, Path(tmp)) for spec in sorted({spec for spec, _ in FILES.values()})}
        members = {**FILES, **{licence_file(spec): (spec, LICENCES.get(spec, LICENCE)) for spec in tarballs}}
        for name, (spec, member) in members.items():
            tarball, integrity = tarballs[spec]
            with tarfile.open(tarball) as tar:
                data = tar.extractfile(member).read()
                declared = json.load(tar.extractfile("package/package.json"))["license"]
            files[name] = (data, {
                "package": spec, "version": spec.rsplit("@", 1)[1], "license": declared,
                "licenseFile": licence_file(spec), "path": member, "integrity": integrity, "sha256": sha256(data),
            })
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the vendored files with the registry's")
    args = parser.parse_args()
    files = from_registry()
    if args.check:
        wrong = [name for name, (data, _) in files.items()
                 if not (VENDOR / name).exists() or (VENDOR / name).read_bytes() != data]
        manifest = json.loads((VENDOR / "manifest.json").read_text())
        if manifest != {name: entry for name, (_, entry) in files.items()}:
            wrong.append("manifest.json")
        for name in wrong:
            print(f"{name} differs from its npm source", file=sys.stderr)
        return 1 if wrong else 0
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name, (data, _) in files.items():
        (VENDOR / name).write_bytes(data)
    manifest = {name: entry for name, (_, entry) in files.items()}
    (VENDOR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
