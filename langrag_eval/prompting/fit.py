"""Fitting a prompt into a small context window by shortening the inside of its blocks.

A judge with a small context (the local llama.cpp judge) cannot read a long prompt whole. Cutting
the token stream anywhere can remove a delimiter: with ``</label>`` cut, the answer's text lands
inside the Label block and the judge grades an answer against itself. So only the *content* of the
innermost tag blocks (``<answer>...</answer>``, each ``<document>``) is shortened, the largest
first, keeping its head and tail around a marker; every tag and all the instructions stay as they
were. A prompt whose instructions alone do not fit is refused, not mangled.

>>> prompt = "Grade.\\n<label>" + "L" * 40 + "</label>\\n<answer>" + "A" * 400 + "</answer>\\nScore?"
>>> fitted = fit_prompt(prompt, len, 200)
>>> len(fitted) <= 200 and fitted.count("</label>") == fitted.count("</answer>") == 1
True
>>> fitted.startswith("Grade.\\n<label>" + "L" * 40 + "</label>") and fitted.endswith("A</answer>\\nScore?")
True
"""

from __future__ import annotations

import math
import re
from typing import Callable

from ..errors import ModelCallError

__all__ = ["fit_prompt", "leaf_blocks", "MARKER"]

MARKER = " [...] "
_TAG = re.compile(r"<(/?)([A-Za-z_][\w-]*)(?:\s[^<>]*)?>")


def leaf_blocks(prompt: str) -> list[tuple[int, int]]:
    """The content spans (between the open and the close tag) of matched tag blocks that hold no
    other matched block, in order. A tag left unmatched (``<br>`` in a document) is text."""
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for m in _TAG.finditer(prompt):
        name = m.group(2).lower()
        if not m.group(1):
            stack.append((name, m.end()))
        elif any(open_name == name for open_name, _ in stack):
            while stack:  # opens left above the match were never closed: text
                open_name, start = stack.pop()
                if open_name == name:
                    pairs.append((start, m.start()))
                    break
    pairs.sort()
    # pairs nest or are disjoint, so a pair holds another exactly when the next one starts inside it
    return [(a, b) for i, (a, b) in enumerate(pairs) if not (i + 1 < len(pairs) and pairs[i + 1][0] < b)]


def _level(sizes: list[int], cut: int) -> int:
    """The largest cap such that capping every size at it removes at least ``cut`` characters."""
    lo, hi = 0, max(sizes)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(max(0, s - mid) for s in sizes) >= cut:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _assemble(prompt: str, spans: list[tuple[int, int]], keep: list[int]) -> str:
    parts, pos = [], 0
    for (a, b), k in zip(spans, keep):
        content = prompt[a:b]
        parts.append(prompt[pos:a])
        if k >= len(content):
            parts.append(content)
        else:  # head and tail: a document's point and an answer's conclusion are at either end
            head = (2 * k) // 3
            parts.append(content[:head] + MARKER + content[len(content) - (k - head):] if k else MARKER.strip())
        pos = b
    parts.append(prompt[pos:])
    return "".join(parts)


def fit_prompt(prompt: str, count: Callable[[str], int], budget: int) -> str:
    """``prompt`` shortened, block contents only, until ``count(prompt) <= budget``. Raises
    :class:`ModelCallError` when even empty blocks leave it over the budget."""
    used = count(prompt)
    if used <= budget:
        return prompt
    spans = leaf_blocks(prompt)
    sizes = [b - a for a, b in spans]
    keep = list(sizes)
    text = prompt
    for _ in range(60):
        if not any(keep):
            break
        # characters to cut, from the tokens over budget at this prompt's characters per token
        cut = math.ceil((used - budget) * len(text) / max(used, 1) * 1.1) + 8
        level = _level(keep, min(cut, sum(keep)))
        keep = [min(k, level) for k in keep]
        text = _assemble(prompt, spans, keep)
        used = count(text)
        if used <= budget:
            return text
    raise ModelCallError(f"the prompt needs {used} tokens with every delimited block emptied, more "
                         f"than the {budget} the judge's context leaves; use a judge with a larger context")
