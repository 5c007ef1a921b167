"""Every HTTP client in a process verifies with one TLS context (reading the CA bundle cost each
new client about 70 ms of CPU), and the variables httpx reads for it are still honoured."""

from __future__ import annotations

import ssl

import certifi

from jarvis_tui.core.providers.http import tls_context
from jarvis_tui.core.providers.openai import OpenAIProvider


async def test_clients_share_one_context_that_verifies():
    first, second = OpenAIProvider("https://a.example/v1"), OpenAIProvider("https://b.example/v1")
    try:
        assert tls_context() is tls_context()
        ctx = tls_context()
        assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
        assert ctx.cert_store_stats()["x509_ca"] > 0
    finally:
        await first.aclose()
        await second.aclose()


def test_a_changed_ssl_cert_file_gets_a_context_of_its_own(monkeypatch, tmp_path):
    default = tls_context()
    bundle = tmp_path / "one.pem"
    bundle.write_text(open(certifi.where(), encoding="ascii").read().split(
        "-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n", encoding="ascii")
    with monkeypatch.context() as changed:
        changed.setenv("SSL_CERT_FILE", str(bundle))
        own = tls_context()
        assert own is not default and own.cert_store_stats()["x509_ca"] == 1
    assert tls_context() is default
