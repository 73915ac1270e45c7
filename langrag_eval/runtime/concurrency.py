"""The one concurrency helper, where the runtime's modules and earlier releases import it from; it
lives in :mod:`langrag_eval.concurrency`, below the evaluator contract that uses it too."""

from ..concurrency import Limiter, gather_bounded, run_sync, synchronous

__all__ = ["Limiter", "gather_bounded", "run_sync", "synchronous"]
