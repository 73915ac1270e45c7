"""The work each Ray actor does in the Ray tests: ``pg_worker``'s judging of N items on a shared
PostgreSQL run, as a picklable object (module-level, so actors import it rather than unpickle code)."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class GradeItems:
    url: str
    log: str
    n: int
    out_dir: str
    latency: float = 0.2
    claim_ttl: float = 3.0

    def __call__(self, index: int) -> int:
        os.environ["CLAIM_TTL"] = str(self.claim_ttl)
        from pg_worker import main
        out = os.path.join(self.out_dir, f"w{index}.json")
        asyncio.run(main(self.url, self.log, self.n, out, self.latency))
        with open(out, encoding="utf-8") as fh:
            return len(json.load(fh))
