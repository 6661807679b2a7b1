"""The inspector and GraphiQL are served from the package: the vendored libraries are exactly the npm files the
manifest names, every file a page loads is served here, and nothing names another host."""

from __future__ import annotations

import hashlib
import json
import re

from graph.http.inspector import ASSETS

VENDOR = ASSETS / "vendor"
REFERENCE = re.compile(r'(?:src|href)="([^"]+)"|from "(\./[^"]+|/[^"]+)"|"(/inspect/assets/[^"]+)"')


def manifest() -> dict:
    return json.loads((VENDOR / "manifest.json").read_text())


def test_every_vendored_file_is_the_npm_file_its_manifest_names():
    entries = manifest()
    assert sorted(entries) == sorted(p.name for p in VENDOR.iterdir() if p.name != "manifest.json")
    for name, entry in entries.items():
        assert re.fullmatch(r"(@?[a-z0-9/-]+)@\d+\.\d+\.\d+", entry["package"]), name
        assert entry["integrity"].startswith("sha512-"), name
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == entry["sha256"], f"{name} was changed"


LICENCE_TITLES = {"MIT": "MIT License", "Apache-2.0": "Apache License"}


def test_every_vendored_file_carries_its_version_and_its_licence_text_beside_it():
    for name, entry in manifest().items():
        assert entry["package"].endswith("@" + entry["version"]), name
        beside = VENDOR / entry["licenseFile"]
        assert beside.name == f"{entry['package']}.LICENSE" and beside.is_file(), name
        assert manifest()[beside.name]["path"] in ("package/LICENSE", "package/LICENSE.md")
        assert LICENCE_TITLES[entry["license"]] in beside.read_text(), name


def references() -> set[str]:
    found = set()
    for page in [*ASSETS.glob("*.html"), *ASSETS.glob("*.js")]:
        for match in REFERENCE.finditer(page.read_text()):
            ref = next(g for g in match.groups() if g)
            found.add(ref if ref.startswith("/") or ref.startswith("data:") else f"/inspect/assets/{ref[2:]}")
    return found


def test_the_pages_name_no_other_host():
    for page in [*ASSETS.glob("*.html"), *ASSETS.glob("*.js"), *ASSETS.glob("*.css")]:
        assert not re.search(r"(?:src|href|url)\s*[=(]\s*[\"']?(?:https?:)?//", page.read_text()), page.name


async def test_every_file_the_pages_load_is_served(client):
    loaded = {ref for ref in references() if ref.startswith("/inspect/assets/")}
    assert "/inspect/assets/vendor/graphiql.min.js" in loaded and "/inspect/assets/tree.js" in loaded
    for ref in loaded:
        assert (await client.http.get(ref)).status_code == 200, ref


async def test_get_root_sends_a_browser_to_the_inspector(client):
    response = await client.http.get("/")
    assert (response.status_code, response.headers["location"]) == (302, "/inspect")


async def test_the_pages_allow_scripts_from_this_server_only(client):
    for path in ("/inspect", "/inspect/5b3f0a4e-0000-4000-8000-000000000000", "/graphql"):
        response = await client.http.get(path, headers={"Accept": "text/html"})
        assert response.status_code == 200 and "<html" in response.text
        policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
        assert policy["default-src"] == "'none'" and policy["connect-src"] == "'self'"
        assert policy["script-src"].startswith("'self'") and "unsafe" not in policy["script-src"]
