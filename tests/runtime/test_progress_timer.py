"""A batch's progress bar appears once the batch has run past its delay, even when no item has
finished yet (THELMA's batched step can take half a minute before its first sample completes),
and never for a batch that ends sooner."""

from __future__ import annotations

import time

from langrag_eval.runtime.progress import BatchProgress


def test_the_bar_shows_before_the_first_item_finishes() -> None:
    with BatchProgress("slow step", 3, delay=0.05, force=True, show=True) as progress:
        time.sleep(0.5)  # nothing finished yet
        assert progress._progress is not None
        task = progress._progress.tasks[0]
        assert task.completed == 0 and task.total == 3 and task.description == "slow step"
        progress.advance()
        assert progress._progress.tasks[0].completed == 1


def test_a_quick_batch_draws_nothing() -> None:
    with BatchProgress("quick", 2, delay=0.5, force=True, show=True) as progress:
        progress.advance(2)
    time.sleep(0.7)
    assert progress._progress is None
