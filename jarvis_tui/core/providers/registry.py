"""Every provider, declared once: what config, the command line, the key check and the error
texts know about it.

Providers register in the entry-point group `jarvis_tui.providers`, each entry a ProviderSpec
(as harlequin's adapters do): a package adds one by declaring it in its own metadata, without
editing ours, and the built-in ones register the same way (pyproject.toml). A plugin that
cannot be loaded, or is not a ProviderSpec of its entry's name, is left out and said once on
standard error; the built-ins are kept even where the installed metadata predates them (an
editable install made before the group existed).

Pure data and small functions: reading it imports no provider module (each is imported when
used), so config and the command line can ask about providers without loading httpx code.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
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


GROUP = "jarvis_tui.providers"

OPENAI = ProviderSpec(
    "openai", "jarvis_tui.core.providers.openai:OpenAIProvider",
    "https://api.openai.com/v1", "gpt-4o-mini", "openai (any OpenAI-compatible server)",
    key_env="OPENAI_API_KEY", url_env="OPENAI_BASE_URL", key_host="api.openai.com")
ANTHROPIC = ProviderSpec(
    "anthropic", "jarvis_tui.core.providers.anthropic:AnthropicProvider",
    "https://api.anthropic.com", "claude-3-5-haiku-latest", "anthropic",
    key_env="ANTHROPIC_API_KEY", url_env="ANTHROPIC_BASE_URL", key_host="api.anthropic.com")
OLLAMA = ProviderSpec(
    "ollama", "jarvis_tui.core.providers.ollama:OllamaProvider",
    "http://127.0.0.1:11434", "llama3.2", "ollama",
    url_env="OLLAMA_HOST", url_from_env=_host_port, url_env_chooses=False)
BUILT_IN = (OPENAI, ANTHROPIC, OLLAMA)
DEFAULT = OPENAI  # used when nothing chooses another


def registered(found: list[EntryPoint], said: Callable[[str], object]) -> list[ProviderSpec]:
    """The providers of the group's entries `found`: the built-in ones first, in their
    order, then the others by name; an entry that fails to load or is not a ProviderSpec of
    its own name is left out, and `said` once."""
    specs = {spec.name: spec for spec in BUILT_IN}
    for entry in sorted(found, key=lambda e: e.name):
        if entry.name in specs:  # a built-in's own entry, or a plugin may not replace it
            if entry.value.startswith(f"{__name__}:"):
                continue
            said(f"jarvis-tui: provider plugin {entry.name!r} ({entry.value}) was left out: "
                 "a built-in provider has that name")
            continue
        try:
            spec = entry.load()
        except Exception as err:  # noqa: BLE001 - someone else's package: any failure
            said(f"jarvis-tui: provider plugin {entry.name!r} ({entry.value}) could not be "
                 f"loaded, so it was left out: {type(err).__name__}: {err}")
            continue
        if not isinstance(spec, ProviderSpec) or spec.name != entry.name:
            said(f"jarvis-tui: provider plugin {entry.name!r} ({entry.value}) was left out: "
                 f"it must be a ProviderSpec named {entry.name!r}")
            continue
        specs[spec.name] = spec
    return list(specs.values())


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


class _Providers(Mapping[str, ProviderSpec]):
    """The providers by name, read from the group when first asked: a plugin's module imports
    our provider modules, which import this one, so it cannot be read while this module is.
    Asked again while the plugins load (a plugin's module reading it), it has the built-ins."""

    def __init__(self) -> None:
        self._specs: dict[str, ProviderSpec] | None = None
        self._loading = False

    def _read(self) -> dict[str, ProviderSpec]:
        if self._specs is not None:
            return self._specs
        if self._loading:
            return {spec.name: spec for spec in BUILT_IN}
        self._loading = True
        try:
            specs = registered(list(entry_points(group=GROUP)), _warn)
        finally:
            self._loading = False
        self._specs = {spec.name: spec for spec in specs}
        return self._specs

    def __getitem__(self, name: str) -> ProviderSpec:
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


PROVIDERS: Mapping[str, ProviderSpec] = _Providers()


def spec_of(name: str) -> ProviderSpec:
    """The provider's entry; the default one for a name it does not know (a base class)."""
    return PROVIDERS.get(name, DEFAULT)


def provider_from_keys(env: Mapping[str, str]) -> str:
    """No provider chosen anywhere: the default one when its key is set, else the first whose
    key is in the environment, else the default one."""
    for spec in (DEFAULT, *PROVIDERS.values()):
        if spec.key_env and env.get(spec.key_env):
            return spec.name
    return DEFAULT.name
