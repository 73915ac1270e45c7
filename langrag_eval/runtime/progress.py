"""Progress bars (rich) that appear only once a batch has run for more than a second.

Off unless asked for: a library call draws nothing on its caller's terminal. The command line turns
them on for the command it runs with :func:`show_progress`, a setting of the current context (the
thread or task and what it starts), not of the process; a batch may also be told directly
(``progress=True``).

>>> BatchProgress("grading", 3).enabled
False
>>> with show_progress(): BatchProgress("grading", 3, force=True).enabled
True
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import Iterator

from rich.console import Console
from rich.errors import LiveError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

__all__ = ["BatchProgress", "show_progress"]

_console = Console(stderr=True)
_SHOW: ContextVar[bool] = ContextVar("langrag_eval_progress", default=False)


@contextmanager
def show_progress(on: bool = True) -> Iterator[None]:
    """Within the block, batches that are not told otherwise draw progress bars (on a terminal)."""
    token = _SHOW.set(on)
    try:
        yield
    finally:
        _SHOW.reset(token)


class BatchProgress:
    """``with BatchProgress("grading", total) as p: ... p.advance()``; silent unless ``show`` (by
    default: inside :func:`show_progress`), for sub-second batches, and when stderr is not a
    terminal (unless ``force``)."""

    def __init__(self, description: str, total: int, *, delay: float = 1.0, force: bool = False,
                 show: bool | None = None) -> None:
        self.description, self.total, self.delay = description, total, delay
        self.enabled = (_SHOW.get() if show is None else show) and (force or sys.stderr.isatty())
        self._progress: Progress | None = None
        self._task = None
        self._done = 0
        self._start = 0.0

    def __enter__(self) -> "BatchProgress":
        self._start = time.monotonic()
        return self

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._progress is None and self.enabled and time.monotonic() - self._start > self.delay:
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeRemainingColumn(),
                                      console=_console, transient=False)
            try:
                self._progress.start()
            except LiveError:
                # rich before 14 shows one live display at a time: a batch running beside another
                # one (the judge audit runs its batteries together) goes without a bar, not down
                self._progress, self.enabled = None, False
                return
            self._task = self._progress.add_task(self.description, total=self.total, completed=self._done)
        elif self._progress is not None:
            self._progress.update(self._task, completed=self._done)  # type: ignore[arg-type]

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self._done)  # type: ignore[arg-type]
            self._progress.stop()
