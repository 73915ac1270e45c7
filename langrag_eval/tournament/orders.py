"""Every Elo tournament's game order, handed out a block of steps at a time in bounded memory.

Elo plays step ``g`` of all tournaments at once (one numpy operation per step, see
:func:`~.ranking.elo_ratings`), so it reads the orders step by step across tournaments, while a
random permutation only exists once it has been drawn whole. The orders are therefore drawn one
tournament after another (``rng.shuffle`` of the games each, which is exactly what one
``rng.permuted`` over the stacked rows draws), as the smallest unsigned code that names each
game's kind, and written into blocks of consecutive steps; the blocks are then read back in order.
Up to ``in_memory`` bytes the blocks stay in memory; beyond that they go to an unnamed temporary
file, so resident memory stays bounded whatever tournaments x games is, and time stays linear in
games (one pass to write, one to read).

>>> rng = np.random.default_rng(0)
>>> blocks = list(step_blocks(np.array([0, 1, 1]), 2, tournaments=4, rng=rng, block_bytes=8))
>>> [b.shape for b in blocks]   # (steps, tournaments): 2 steps of 4 tournaments fill 8 bytes
[(2, 4), (1, 4)]
>>> np.vstack(blocks).T.tolist() == np.array([0, 1, 1])[
...     np.random.default_rng(0).permuted(np.tile(np.arange(3), (4, 1)), axis=1)].tolist()
True
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

__all__ = ["step_blocks"]

IN_MEMORY = 64 * 2 ** 20    # bytes of orders kept in memory before they go to a temporary file
BLOCK_BYTES = 8 * 2 ** 20   # bytes of orders per block handed out


def step_blocks(kinds: np.ndarray, n_kinds: int, *, tournaments: int, rng: np.random.Generator,
                in_memory: int | None = None, block_bytes: int | None = None) -> Iterator[np.ndarray]:
    """Yield arrays of shape ``(steps, tournaments)``: at each step, the kind (``kinds[game]``) of
    the game each tournament plays. Consecutive blocks cover every step once, in order.
    ``in_memory`` and ``block_bytes`` default to the module's ``IN_MEMORY`` and ``BLOCK_BYTES``."""
    in_memory = IN_MEMORY if in_memory is None else in_memory
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    n_games = len(kinds)
    dtype = np.min_scalar_type(max(n_kinds - 1, 0))
    codes = np.asarray(kinds).astype(dtype)
    item = dtype.itemsize
    steps = max(1, block_bytes // (tournaments * item))
    starts = range(0, n_games, steps)
    spool: BinaryIO = (io.BytesIO() if tournaments * n_games * item <= in_memory
                       else tempfile.TemporaryFile())
    with spool:
        for t in range(tournaments):
            # shuffling the codes in place draws exactly what rng.permutation(n_games) would, and
            # moves 1-4 byte codes instead of 8-byte positions
            row = codes.copy()
            rng.shuffle(row)
            for start in starts:
                # block at `start` holds (tournaments, width) codes, tournament-major
                width = min(steps, n_games - start)
                spool.seek((start * tournaments + t * width) * item)
                spool.write(row[start:start + width].tobytes())
        for start in starts:
            width = min(steps, n_games - start)
            block = np.empty((tournaments, width), dtype=dtype)
            spool.seek(start * tournaments * item)
            if spool.readinto(memoryview(block).cast("B")) != block.nbytes:
                raise OSError("the temporary file of tournament orders came back short")
            yield np.ascontiguousarray(block.T)
