"""A batch's progress bar appears once the batch has run past its delay, even when no item has
finished yet (THELMA's batched step can take half a minute before its first sample completes),
and never for a batch that ends sooner."""

from __future__ import annotations

from langrag_eval.runtime.progress import BatchProgress


def test_the_bar_shows_before_the_first_item_finishes() -> None:
    with BatchProgress("slow step", 3, delay=0.05, force=True, show=True) as progress:
        # nothing finished yet: wait for the delay's timer to have drawn the bar (its first draw
        # imports rich, which a loaded machine may take longer than any fixed sleep to do)
        progress._timer.join(timeout=60)
        assert progress._progress is not None
        task = progress._progress.tasks[0]
        assert task.completed == 0 and task.total == 3 and task.description == "slow step"
        progress.advance()
        assert progress._progress.tasks[0].completed == 1


def test_a_quick_batch_draws_nothing() -> None:
    with BatchProgress("quick", 2, delay=5.0, force=True, show=True) as progress:
        progress.advance(2)
    progress._timer.join(timeout=60)  # at once when the exit cancelled it; past the delay otherwise
    assert progress._progress is None
