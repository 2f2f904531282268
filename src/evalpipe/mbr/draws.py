"""Random draws of the randomized MBR decoders (probabilistic, pruning, centroid's k-means++).

Where torch is installed the draws are torch's CPU generator seeded as mbrs 0.1.8 seeds it (a fresh
``torch.Generator().manual_seed(seed)`` for every segment and every use), so the same seed draws the same cells,
bootstrap samples and k-means seeds as mbrs.  Without torch they are numpy's ``default_rng(seed)`` (PCG64): as
reproducible, but other draws -- so other choices where a draw decides.  :func:`kind` names the generator in use;
the command's JSON output and the signature say it (``draws:torch`` or ``draws:numpy``).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from evalpipe.optional_torch import installed, load

KINDS = ("torch", "numpy")
NEEDS_TORCH = "draws=torch makes mbrs's draws with torch's generator: pip install torch"


def kind(wanted: Optional[str] = None) -> str:
    """``wanted`` if given (``numpy`` always works; ``torch`` needs torch), else torch where importable."""
    if wanted == "numpy":
        return "numpy"
    if wanted == "torch":
        load(NEEDS_TORCH)
        return "torch"
    return "torch" if installed() else "numpy"


class Draws:
    """One seeded generator (a decoder makes a fresh one for each segment and each use, as mbrs does)."""

    def __init__(self, seed: int, which: str) -> None:
        self.which = which
        if which == "torch":
            self._torch = load(NEEDS_TORCH)
            self._g = self._torch.Generator().manual_seed(int(seed))
        else:
            self._g = np.random.default_rng(int(seed))

    def randperm(self, n: int) -> np.ndarray:
        """A permutation of ``range(n)`` (``torch.randperm``)."""
        if self.which == "torch":
            return self._torch.randperm(n, generator=self._g).numpy()
        return self._g.permutation(n)

    def randint(self, high: int, size: tuple) -> np.ndarray:
        """Integers in ``[0, high)`` of this shape (``torch.randint``)."""
        if self.which == "torch":
            return self._torch.randint(high, size=size, generator=self._g).numpy()
        return self._g.integers(0, high, size=size)

    def rand(self, shape: tuple) -> np.ndarray:
        """float32 uniforms in ``[0, 1)`` (``torch.rand``)."""
        if self.which == "torch":
            return self._torch.rand(shape, generator=self._g).numpy()
        return self._g.random(shape, dtype=np.float32)

    def choice(self, weights: Any) -> int:
        """One index drawn with these (float32) weights (``torch.multinomial(weights, 1)``)."""
        w = np.asarray(weights, dtype=np.float32)
        if self.which == "torch":
            return int(self._torch.multinomial(self._torch.from_numpy(w), 1, generator=self._g).item())
        p = w.astype(np.float64)
        return int(self._g.choice(len(p), p=p / p.sum()))
