"""An empty reply that may be an overflow in disguise.

Some servers and proxies answer a request over the model's real window with no error at all:
llama-cpp-python with an empty stream, LiteLLM in front of llama.cpp with a 200 whose stream
holds one empty chunk that "stopped". Taken at its word, the turn is answered with nothing and
the conversation never compacts. So an empty reply to a request that may be over the real limit
is asked again once, unstreamed and for one token: there the same servers say it plainly
(LiteLLM passes llama.cpp's 400 on). A ContextOverflow from that is what the empty reply meant;
any other answer leaves it an empty reply, which a model with nothing to say does send.
"""

from __future__ import annotations

from jarvis_tui.core.providers.base import Provider
from jarvis_tui.core.providers.errors import ContextOverflow, NetworkError, ProviderError

# A request whose estimate fills this share of a window the server itself named may be over it:
# our count of it is an estimate.
MAY_OVERFLOW_FROM = 0.5
PROBE_TRIES = 3


def may_be_over(window_is_servers: bool, estimated: int, window: int) -> bool:
    """Whether a request of `estimated` tokens (with its reply's room) may have been over the
    server's real window: always, unless the server named that window (`window_is_servers`)
    and the request is well inside it. A configured window may be the wrong one (a proxy in
    front of a smaller server), so then any request may be over it."""
    return not window_is_servers or estimated >= window * MAY_OVERFLOW_FROM


async def overflow_behind(provider: Provider, messages: list[dict], *, model: str,
                          context_window: int, tools: list[dict] | None
                          ) -> ContextOverflow | None:
    """The overflow an empty reply to `messages` hid, asked once unstreamed for one token;
    None when the server takes that request (the reply really was empty) or says anything else.
    """
    for _ in range(PROBE_TRIES):
        try:
            await provider.complete(messages, model=model, max_tokens=1,
                                    context_window=context_window, tools=tools or None)
        except ContextOverflow as err:
            return err
        except NetworkError:
            # The pool handed out a keep-alive connection the server was closing (the empty
            # stream's own, back in the pool before the server's FIN arrived): once more.
            continue
        except ProviderError:
            return None
        return None
    return None
