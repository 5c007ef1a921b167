"""Choosing the provider for the settings: one wire protocol per module, imported when used.
Each provider's facts are its entry in registry.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from jarvis_tui.core.providers.local_server import LOCAL_MODEL_NAME, LOCAL_SUMMARY_SAMPLING
from jarvis_tui.core.providers.registry import PROVIDERS

if TYPE_CHECKING:
    from jarvis_tui.core.providers.base import Provider


class ProviderSettings(Protocol):
    """What choosing a provider reads of the settings (core/settings/config.py), which sit
    above the providers: settings ask the registry which providers exist."""

    provider: str
    base_url: str
    api_key: str
    model: str
    request_timeout: float
    connect_timeout: float
    first_token_timeout: float
    reply_timeout: float


def make_provider(settings: ProviderSettings) -> Provider:
    timeouts = {"timeout": settings.request_timeout, "connect_timeout": settings.connect_timeout,
                "first_token_timeout": settings.first_token_timeout,
                "reply_timeout": settings.reply_timeout}
    provider = PROVIDERS[settings.provider].make(settings.base_url, settings.api_key, **timeouts)
    if settings.provider == "openai" and settings.model == LOCAL_MODEL_NAME:
        # The bundled model's server passes the calls the model writes through as text.
        provider.text_tool_calls = True  # type: ignore[attr-defined]
        provider.complete_sampling = dict(LOCAL_SUMMARY_SAMPLING)  # type: ignore[attr-defined]
    return provider


def missing_key(settings: ProviderSettings) -> str | None:
    """The environment variable to set when a hosted API is used without a key, else None."""
    spec = PROVIDERS.get(settings.provider)
    # Hosted APIs refuse every request without a key; local servers usually need none.
    if spec and spec.key_host and spec.key_host in settings.base_url and not settings.api_key:
        return spec.key_named
    return None
