"""Identity providers for the tests: a key server of our own (discovery and a key set, RS256, ES256 and EdDSA keys
it signs with, every request it is asked counted), and oidc-provider-mock, a real OpenID provider with a sign-in
page, whose key can be rotated while it runs."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import flask
import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

MAKERS = {
    "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
    "EdDSA": ed25519.Ed25519PrivateKey.generate,
}


@dataclass
class SigningKey:
    algorithm: str
    private: object = None
    kid: str = field(default_factory=lambda: secrets.token_hex(8))

    def __post_init__(self) -> None:
        self.private = self.private or MAKERS[self.algorithm]()

    def public_jwk(self) -> dict:
        found = json.loads(jwt.get_algorithm_by_name(self.algorithm).to_jwk(self.private.public_key()))
        return {**found, "kid": self.kid, "use": "sig", "alg": self.algorithm}


class KeyServer:
    """An issuer at http://127.0.0.1:PORT serving its discovery document and key set, each answer `delay` seconds
    late; `requests` lists every path asked for."""

    def __init__(self, *algorithms: str) -> None:
        self.keys = [SigningKey(a) for a in algorithms or ("RS256",)]
        self.requests: list[str] = []
        self.delay = 0.0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                time.sleep(owner.delay)
                bodies = {
                    "/.well-known/openid-configuration": {"issuer": owner.issuer, "jwks_uri": owner.issuer + "/jwks"},
                    "/jwks": {"keys": [key.public_jwk() for key in owner.keys]},
                }
                body = json.dumps(bodies.get(self.path, {})).encode()
                self.send_response(200 if self.path in bodies else 404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.http.server_port}"

    def __enter__(self) -> KeyServer:
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()

    def token(self, key: SigningKey | None = None, headers: dict | None = None, **claims: object) -> str:
        key = key or self.keys[0]
        now = int(time.time())
        body = {"iss": self.issuer, "aud": "agentlog", "sub": "mia", "iat": now, "exp": now + 600, **claims}
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, key.private, algorithm=key.algorithm, headers={"kid": key.kid, **(headers or {})})


CALLBACK = "http://localhost/callback"


@dataclass
class MockProvider:
    """oidc-provider-mock on a free port of localhost; `storage` is its own, so its key can be swapped."""

    app: flask.Flask
    issuer: str
    storage: object
    client_id: str = ""

    def set_user(self, sub: str, **claims: object) -> None:
        httpx.put(f"{self.issuer}/users/{sub}", json=claims, timeout=10).raise_for_status()

    def rotate_key(self) -> None:
        from authlib import jose

        self.storage.jwk = jose.RSAKey.generate_key(is_private=True)

    def public_client(self, *redirect_uris: str) -> str:
        """A client registered as a browser's is: no secret, only these redirect URIs; its client id."""
        answer = httpx.post(f"{self.issuer}/oauth2/clients", timeout=10, json={
            "redirect_uris": list(redirect_uris), "token_endpoint_auth_method": "none",
        })
        answer.raise_for_status()
        return answer.json()["client_id"]

    def kid(self) -> str:
        return httpx.get(f"{self.issuer}/jwks", timeout=10).json()["keys"][0]["kid"]

    def sign_in(self, sub: str, client_id: str, redirect: str = CALLBACK) -> dict:
        """The authorization-code flow with PKCE as a browser would run it, choosing `sub` on the sign-in page;
        the token endpoint's answer."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "client_id": client_id, "redirect_uri": redirect, "response_type": "code", "scope": "openid profile",
            "state": "s", "code_challenge": challenge, "code_challenge_method": "S256",
        }
        with httpx.Client(base_url=self.issuer, timeout=10) as http:
            chosen = http.post("/oauth2/authorize", params=query, data={"sub": sub})
            assert chosen.status_code in (302, 303), chosen.text
            code = parse_qs(urlparse(chosen.headers["location"]).query)["code"][0]
            answer = http.post("/oauth2/token", data={
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                "client_id": client_id, "code_verifier": verifier,
            })
        assert answer.status_code == 200, answer.text
        return answer.json()


def _cors_as_in_0_4(response: flask.Response) -> flask.Response:
    if flask.request.endpoint != "oidc-provider-mock.authorize":
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Allow-Headers"] = "*, Authorization"
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, PUT, OPTIONS"
    return response


PUBLIC_CLIENTS = ["client_secret_basic", "client_secret_post", "none"]


@contextmanager
def mock_provider(**options: object) -> Iterator[MockProvider]:
    """oidc-provider-mock 0.3.4, the last release for Python 3.11, lets no public client (a browser's, with no
    secret) to its token endpoint, and sends no CORS headers, so no page could read its discovery document or
    trade a code. 0.4 does both, as real providers do for single-page clients; both are set here as 0.4 has them."""
    import werkzeug.serving
    from oidc_provider_mock import _app
    from oidc_provider_mock import app as provider_app

    _app.AuthorizationCodeGrant.TOKEN_ENDPOINT_AUTH_METHODS = PUBLIC_CLIENTS
    _app.RefreshTokenGrant.TOKEN_ENDPOINT_AUTH_METHODS = PUBLIC_CLIENTS

    app = provider_app(**options)
    app.after_request(_cors_as_in_0_4)
    with app.test_request_context():
        app.preprocess_request()
        storage = flask.g.oidc_provider_mock_storage
    server = werkzeug.serving.make_server("localhost", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield MockProvider(app, f"http://localhost:{server.server_port}", storage)
    finally:
        server.shutdown()
        server.server_close()
