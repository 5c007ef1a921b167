"""A package adds a provider without editing ours: an entry in the `jarvis_tui.providers` group
(issue 41, item 7). Each test installs a small package the way pip leaves one on disk (its
module and a dist-info with entry_points.txt) in a folder on PYTHONPATH, then runs the command
line as a user would, against the fake server over loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from jarvis_tui.core.providers.registry import BUILT_IN, GROUP, PROVIDERS

PLUGIN = '''
from jarvis_tui.core.providers.openai import OpenAIProvider
from jarvis_tui.core.providers.registry import ProviderSpec


class AcmeProvider(OpenAIProvider):
    """Acme's gateway speaks OpenAI's protocol under its own name."""


SPEC = ProviderSpec("acme", "acme_provider:AcmeProvider", "https://llm.acme.example/v1",
                    "acme-large", "acme (Acme's gateway)", key_env="ACME_API_KEY")
NOT_A_SPEC = "acme"
'''


def install(site: Path, entries: dict[str, str], module: str | None = PLUGIN) -> None:
    """A distribution `acme-provider` in `site`, declaring `entries` in the group."""
    if module is not None:
        (site / "acme_provider.py").write_text(module, encoding="utf-8")
    info = site / "acme_provider-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-provider\nVersion: 1.0\n",
                                   encoding="utf-8")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}", encoding="utf-8")


def run(env: dict[str, str], site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "jarvis_tui", *args],
                          env={**env, "PYTHONPATH": path}, capture_output=True, text=True,
                          timeout=60)


def test_the_built_in_providers_register_in_the_group():
    """As installed (pip install -e .): each built-in provider is an entry of the group, and
    the entry loads the very spec the registry holds."""
    entries = {e.name: e for e in entry_points(group=GROUP)}
    for spec in BUILT_IN:
        assert entries[spec.name].load() is spec is PROVIDERS[spec.name]
    assert list(PROVIDERS)[:len(BUILT_IN)] == [spec.name for spec in BUILT_IN]


def test_a_package_adds_a_provider_the_user_can_choose(home, fake_server, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install(site, {"acme": "acme_provider:SPEC"})
    helped = run(home, site, "--help")
    assert "acme" in helped.stdout and "Acme's gateway" in helped.stdout
    asked = run({**home, "ACME_API_KEY": "sk-acme-123"}, site, "--provider", "acme",
                "--base-url", fake_server.base_url, "ask", "Hello from a plugin")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip() == fake_server.chat_requests[-1].reply
    request = fake_server.chat_requests[-1]
    assert request.body["model"] == "acme-large"  # the plugin's default model
    assert request.headers.get("Authorization") == "Bearer sk-acme-123"  # its key variable
    assert "provider plugin" not in asked.stderr


def test_a_broken_plugin_is_said_once_and_the_rest_works(home, fake_server, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install(site, {"gone": "acme_missing:SPEC", "wrong": "acme_provider:NOT_A_SPEC",
                   "openai": "acme_provider:SPEC"})
    asked = run(home, site, "--base-url", fake_server.base_url, "--model", "fake-model",
                "ask", "still here?")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip() == fake_server.chat_requests[-1].reply
    said = [line for line in asked.stderr.splitlines() if "provider plugin" in line]
    assert len(said) == 3, asked.stderr
    assert any("'gone'" in line and "could not be loaded" in line
               and "ModuleNotFoundError" in line for line in said)
    assert any("'wrong'" in line and "must be a ProviderSpec named 'wrong'" in line
               for line in said)
    assert any("'openai'" in line and "a built-in provider has that name" in line
               for line in said)
    chosen = run(home, site, "--provider", "gone", "--base-url", fake_server.base_url, "ask",
                 "hi")
    assert chosen.returncode != 0 and "Traceback" not in chosen.stderr
    assert "gone" in chosen.stderr
