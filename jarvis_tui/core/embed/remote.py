"""The provider's embeddings endpoint instead of the bundled model, when the user names a model
for it (`embedding_model`): OpenAI's `POST {base_url}/embeddings` shape, which OpenAI, vLLM,
llama.cpp's server, Ollama's /v1 and LiteLLM all serve. The vectors are normalised here (not
every server does), and stored under "remote:<model>": they are never compared with another
model's. A server that is unreachable, busy (429) or failing (5xx) is tried again a minute
later; any other failure turns recall by meaning off for the session with one line that says
why (core/embed/meaning.py). Meanwhile the words find what they can.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from jarvis_tui.core.embed.model import BATCH, Interrupted, Unavailable, clip
from jarvis_tui.core.embed.numpy_later import np

TIMEOUT = httpx.Timeout(30.0, connect=5.0)  # a batch of 64 turns; a server that hangs is cut


class RemoteEmbedder:
    def __init__(self, base_url: str, model: str, api_key: str = "") -> None:
        self.name = f"remote:{model}"
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        parts = [self._batch([clip(t) for t in texts[i:i + BATCH]])
                 for i in range(0, len(texts), BATCH)]
        if not parts:
            return np.zeros((0, 1), dtype=np.float32)
        vecs = np.concatenate(parts).astype(np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vecs / norms

    def _batch(self, texts: list[str]) -> np.ndarray:
        where = f"{self.url} (model {self.model})"
        try:
            reply = httpx.post(self.url, json={"model": self.model, "input": texts},
                               headers=self.headers, timeout=TIMEOUT)
        except httpx.HTTPError as e:
            raise Interrupted(f"the embeddings endpoint {where} could not be reached: "
                              f"{type(e).__name__}") from None
        if reply.status_code == 429 or reply.status_code >= 500:  # busy or down: for now
            said = reply.text[:200].replace("\n", " ")
            raise Interrupted(f"the embeddings endpoint {where} answered HTTP "
                              f"{reply.status_code}: {said}")
        if reply.status_code != 200:
            said = reply.text[:200].replace("\n", " ")
            raise Unavailable(f"the embeddings endpoint {where} answered HTTP "
                              f"{reply.status_code}: {said}; check embedding_model")
        try:
            data = sorted(reply.json()["data"], key=lambda d: d["index"])
            vecs = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as e:
            raise Unavailable(f"the embeddings endpoint {where} sent what is not OpenAI's "
                              f"embeddings shape ({type(e).__name__})") from None
        if vecs.ndim != 2 or len(vecs) != len(texts):
            raise Unavailable(f"the embeddings endpoint {where} sent {len(vecs)} vectors for "
                              f"{len(texts)} texts")
        return vecs
