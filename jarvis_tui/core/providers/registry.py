"""Every provider, declared once: what config, the command line, the key check and the error
texts know about it. Adding a provider is one entry here and its module.

Pure data and small functions: reading it imports no provider module (each is imported when
used), so config and the command line can ask about providers without loading httpx code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jarvis_tui.core.providers.base import Provider

# The key variable for any provider; the vendors' own apply only to their provider.
GENERIC_KEY_ENV = "JARVIS_API_KEY"


def _as_written(value: str) -> str:
    return value


def _host_port(value: str) -> str:
    # Ollama's own variable is usually host:port.
    return value if "://" in value else f"http://{value.strip()}"


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    provider_class: str  # "module:Class", imported only when a provider is made
    base_url: str  # where it is when no address is given
    model: str  # a model it surely serves when none is given
    help: str  # its words in `--provider`'s help
    key_env: str = ""  # the vendor's key variable, read only for this provider
    url_env: str = ""  # the vendor's address variable, read only for this provider
    url_from_env: Callable[[str], str] = _as_written
    # Whether the vendor's address variable alone means the user chose where to connect;
    # OLLAMA_HOST is set for Ollama's own tools and says nothing about jarvis-tui.
    url_env_chooses: bool = True
    key_host: str = ""  # a hosted API there refuses every request without a key

    @property
    def key_named(self) -> str:
        """The variable an error about a rejected or missing key tells the user to set."""
        return self.key_env or GENERIC_KEY_ENV

    def vendor_env(self) -> dict[str, str]:
        """The vendor's variables: setting name for each, the key first."""
        pairs = ((self.key_env, "api_key"), (self.url_env, "base_url"))
        return {var: key for var, key in pairs if var}

    def make(self, base_url: str, api_key: str, **timeouts: float) -> Provider:
        module, _, name = self.provider_class.partition(":")
        provider = getattr(importlib.import_module(module), name)(base_url, api_key, **timeouts)
        provider.key_env = self.key_named
        return provider


_SPECS = (
    ProviderSpec(
        "openai", "jarvis_tui.core.providers.openai:OpenAIProvider",
        "https://api.openai.com/v1", "gpt-4o-mini", "openai (any OpenAI-compatible server)",
        key_env="OPENAI_API_KEY", url_env="OPENAI_BASE_URL", key_host="api.openai.com"),
    ProviderSpec(
        "anthropic", "jarvis_tui.core.providers.anthropic:AnthropicProvider",
        "https://api.anthropic.com", "claude-3-5-haiku-latest", "anthropic",
        key_env="ANTHROPIC_API_KEY", url_env="ANTHROPIC_BASE_URL", key_host="api.anthropic.com"),
    ProviderSpec(
        "ollama", "jarvis_tui.core.providers.ollama:OllamaProvider",
        "http://127.0.0.1:11434", "llama3.2", "ollama",
        url_env="OLLAMA_HOST", url_from_env=_host_port, url_env_chooses=False),
)
PROVIDERS: dict[str, ProviderSpec] = {spec.name: spec for spec in _SPECS}
DEFAULT = _SPECS[0]  # used when nothing chooses another


def spec_of(name: str) -> ProviderSpec:
    """The provider's entry; the default one for a name it does not know (a base class)."""
    return PROVIDERS.get(name, DEFAULT)


def provider_from_keys(env: Mapping[str, str]) -> str:
    """No provider chosen anywhere: the default one when its key is set, else the first whose
    key is in the environment, else the default one."""
    for spec in (DEFAULT, *_SPECS):
        if spec.key_env and env.get(spec.key_env):
            return spec.name
    return DEFAULT.name
