"""The development key is used only while neither AGENTLOG_JWT_SECRET nor an identity provider is set: beside a
provider, no HS256 token is made or taken without the secret, and the server may listen anywhere."""

from __future__ import annotations

import pytest

from graph.cli import main as cli
from permissions import oidc
from permissions.tokens import DEV_SECRET, NoSecret, issue_token, secret


ISSUER = "https://login.example/realms/workshop"


@pytest.fixture
def provider_without_secret(configure):
    configure(jwt_secret=None, oidc_issuer=ISSUER, oidc_audience="agentlog")
    oidc.provider.cache_clear()


def test_without_secret_or_provider_the_development_key_signs(configure):
    configure(jwt_secret=None, oidc_issuer=None, oidc_audience=None)
    assert secret() == DEV_SECRET


def test_beside_a_provider_no_token_of_our_own_is_made_without_the_secret(provider_without_secret, capsys):
    assert secret() is None
    with pytest.raises(NoSecret):
        issue_token("kit", "shop", kit=True)
    assert cli.main(["token", "--sub", "kit", "--tenant", "shop", "--kit"]) == 2
    assert "AGENTLOG_JWT_SECRET" in capsys.readouterr().err


def test_beside_a_provider_serve_listens_anywhere_without_the_development_key(monkeypatch):
    import uvicorn

    monkeypatch.delenv("AGENTLOG_JWT_SECRET", raising=False)
    monkeypatch.setenv("AGENTLOG_OIDC_ISSUER", ISSUER)
    monkeypatch.setenv("AGENTLOG_OIDC_AUDIENCE", "agentlog")
    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.update(kwargs))
    assert cli.main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 0
    assert started["host"] == "0.0.0.0"


def test_a_provider_without_an_audience_stops_serve(monkeypatch, capsys):
    monkeypatch.setenv("AGENTLOG_OIDC_ISSUER", ISSUER)
    monkeypatch.delenv("AGENTLOG_OIDC_AUDIENCE", raising=False)
    assert cli.main(["serve", "--port", "0"]) == 2
    assert "AGENTLOG_OIDC_AUDIENCE" in capsys.readouterr().err
