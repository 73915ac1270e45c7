"""Other work on the machine, held for a benchmark's length. The performance goals are set for a
shared 2-core machine at a load average near 4; a quiet machine and a busy one rank the tools
differently (a tool that spends more CPU a request loses more when the CPU is shared), so a
benchmark can hold that condition itself instead of taking whatever load the machine has:

    with busy(3) as load:                  # three processes that spin on the CPU
        ...                                # the measured work
    print(load.text())                     # "3 busy processes; load 3.6 to 4.4 (mean 4.1)"

The load average is sampled every few seconds while they run, and reported as measured: the
processes set the condition, the samples say what it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Load", "busy"]


@dataclass
class Load:
    """The busy processes started and the 1-minute load averages sampled while they ran."""

    processes: int
    samples: list[float] = field(default_factory=list)

    def text(self) -> str:
        if not self.samples:
            return f"{self.processes} busy process(es); load not sampled"
        low, high = min(self.samples), max(self.samples)
        mean = sum(self.samples) / len(self.samples)
        held = f"{self.processes} busy process(es) beside it" if self.processes else "no busy process"
        return f"{held}; load average {low:.1f} to {high:.1f} while measured (mean {mean:.1f})"


@contextmanager
def busy(processes: int, *, every: float = 5.0) -> Iterator[Load]:
    """``processes`` child processes spinning on the CPU at normal priority for the block's
    length, and the load average sampled every ``every`` seconds meanwhile (also with none)."""
    load = Load(processes)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
                for _ in range(processes)]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(every):
            load.samples.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield load
    finally:
        stop.set()
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()
        sampler.join()
