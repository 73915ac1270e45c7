"""The judge runtime: concurrency, retries, cache, run store, usage and resumable batches."""

from .batch import run_batch
from .concurrency import Limiter, gather_bounded, run_sync, synchronous
from .items import content_key, put_item_index
from .progress import show_progress
from .judge import Answer, Judge, PriceTable, UsageMeter
from .retry import RetryPolicy, classify
from .store import DEFAULT_STORE, RunStore, open_store, run_id_for

__all__ = ["Answer", "Judge", "PriceTable", "UsageMeter", "RetryPolicy", "classify", "RunStore",
           "DEFAULT_STORE", "run_id_for", "run_batch", "gather_bounded", "Limiter", "run_sync", "synchronous",
           "content_key", "put_item_index", "open_store", "show_progress"]
