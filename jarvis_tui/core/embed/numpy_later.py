"""numpy, imported when first used rather than when the engine is: the chat screen's first
frame needs no vector (recall and embedding start with the first question), and numpy is the
costliest import of the start after Textual (about 50-80 ms). The modules that rank by meaning
write `np.x` as before; the first attribute read imports numpy, and each name is kept on the
stand-in, so later reads cost a dict lookup. The import itself holds Python's import lock, so
the embedding thread and the event loop can both be first. (importlib.util.LazyLoader does
the same for a whole module, but on Python 3.11 two threads finishing its load at once can
see it half made, a race later Pythons fixed.)"""

from __future__ import annotations

from typing import Any


class _Later:
    def __getattr__(self, name: str) -> Any:
        import numpy

        value = getattr(numpy, name)
        self.__dict__[name] = value
        return value


np: Any = _Later()
