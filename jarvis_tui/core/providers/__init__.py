"""Choosing the provider for the settings: one wire protocol per module, imported when used."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jarvis_tui.core.config import Settings
    from jarvis_tui.core.providers.base import Provider

# Hosted APIs that refuse every request without a key; local servers usually need none.
KEY_NEEDED = {"openai": ("api.openai.com", "OPENAI_API_KEY"),
              "anthropic": ("api.anthropic.com", "ANTHROPIC_API_KEY")}


def make_provider(settings: Settings) -> Provider:
    timeouts = {"timeout": settings.request_timeout, "connect_timeout": settings.connect_timeout,
                "first_token_timeout": settings.first_token_timeout,
                "reply_timeout": settings.reply_timeout}
    if settings.provider == "anthropic":
        from jarvis_tui.core.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings.base_url, settings.api_key, **timeouts)
    if settings.provider == "ollama":
        from jarvis_tui.core.providers.ollama import OllamaProvider

        return OllamaProvider(settings.base_url, settings.api_key, **timeouts)
    from jarvis_tui.core.providers.openai import OpenAIProvider

    return OpenAIProvider(settings.base_url, settings.api_key, **timeouts)


def missing_key(settings: Settings) -> str | None:
    """The environment variable to set when a hosted API is used without a key, else None."""
    host, var = KEY_NEEDED.get(settings.provider, ("", ""))
    if host and host in settings.base_url and not settings.api_key:
        return var
    return None
