"""Progress bars (rich) that appear once a batch has run for more than a second, whether or not an
item has finished by then (a batch whose first items take half a minute shows its bar at once).

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
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Iterator

__all__ = ["BatchProgress", "show_progress"]

_console: Any = None
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
    terminal (unless ``force``). rich is imported only when a bar is drawn."""

    def __init__(self, description: str, total: int, *, delay: float = 1.0, force: bool = False,
                 show: bool | None = None) -> None:
        self.description, self.total, self.delay = description, total, delay
        self.enabled = (_SHOW.get() if show is None else show) and (force or sys.stderr.isatty())
        self._progress: Any = None
        self._task = None
        self._done = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False

    def __enter__(self) -> "BatchProgress":
        if self.enabled:
            self._timer = threading.Timer(self.delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self) -> None:
        global _console
        with self._lock:
            if self._closed or self._progress is not None or not self.enabled:
                return
            from rich.console import Console
            from rich.errors import LiveError
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            _console = _console or Console(stderr=True)
            progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeRemainingColumn(), console=_console, transient=False)
            try:
                progress.start()
            except LiveError:
                # rich before 14 shows one live display at a time: a batch running beside another
                # one (the judge audit runs its batteries together) goes without a bar, not down
                self.enabled = False
                return
            self._progress = progress
            self._task = progress.add_task(self.description, total=self.total, completed=self._done)

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self._done += n
            if self._progress is not None:
                self._progress.update(self._task, completed=self._done)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._progress is not None:
                self._progress.update(self._task, completed=self._done)
                self._progress.stop()
