"""An image's tokens by the formula its provider publishes, at the size the provider scales it
to: what the chip shows, the window counts and a request carries.

- OpenAI (GPT-4o family, detail "high", the default "auto" for a large image): fit in
  2048 x 2048, then the shorter side down to 768; 85 tokens plus 170 for each 512-pixel tile.
- Anthropic: the long edge at most 1568 pixels and about 1.15 megapixels (1,600 tokens);
  width x height / 750 tokens.
- Ollama: vision models read fixed 28-pixel patches after a resize to at most 1024 pixels a
  side (Qwen2.5-VL, LLaVA-style encoders differ); one token a 28 x 28 patch. An estimate; the
  server's count calibrates the next one, as for text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

OPENAI = "openai"
ANTHROPIC = "anthropic"
OLLAMA = "ollama"


@dataclass(frozen=True)
class ImageCost:
    width: int  # as sent
    height: int
    tokens: int

    def scaled_from(self, width: int, height: int) -> bool:
        return (self.width, self.height) != (width, height)


def _fit(width: int, height: int, factor: float) -> tuple[int, int]:
    if factor >= 1:
        return width, height
    return max(1, math.floor(width * factor)), max(1, math.floor(height * factor))


def image_cost(protocol: str, width: int, height: int) -> ImageCost:
    if protocol == ANTHROPIC:
        w, h = _fit(width, height, min(1568 / max(width, height),
                                       math.sqrt(1600 * 750 / (width * height))))
        return ImageCost(w, h, math.ceil(w * h / 750))
    if protocol == OLLAMA:
        w, h = _fit(width, height, 1024 / max(width, height))
        return ImageCost(w, h, math.ceil(w / 28) * math.ceil(h / 28))
    w, h = _fit(width, height, 2048 / max(width, height))
    w, h = _fit(w, h, 768 / min(w, h))
    return ImageCost(w, h, 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512))
