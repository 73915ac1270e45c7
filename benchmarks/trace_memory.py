"""Peak memory of reading a production trace export and choosing what to score, against its size.

    python benchmarks/trace_memory.py                          # 10,000 and 100,000 traces
    python benchmarks/trace_memory.py --traces 10000,1000000   # the million-trace export

For each size, a synthetic OTLP/JSON export (what a collector's file exporter writes: one
``ExportTraceServiceRequest`` a line, 20 traces a request, each trace a CHAIN root with a RETRIEVER
and an LLM child carrying the OpenInference attributes, the children a request ahead of their root,
as a batch span processor exports spans as they end) spread over one week is written to a temporary
folder (never the repository) and read in a child process the way ``thelma --traces`` reads it:
every trace into its sample by live capture's rule (:func:`langrag_eval.traces.read_export_samples`),
then windows of ``--window`` with at most ``--max-per-window`` traces each
(:func:`langrag_eval.traces.windows.choose`). Prints the child's peak resident memory (``VmHWM``),
its seconds, the samples kept, and the memory per trace beyond the smallest size's:
``(peak(N) - peak(N0)) / (N - N0)``. The target: a million traces read in under 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WEEK_NS = 7 * 86_400 * 10**9
START_NS = 1_795_000_000 * 10**9
PER_REQUEST = 20

CHILD = r'''
import sys, time
from langrag_eval.traces import read_export_samples
from langrag_eval.traces.windows import choose, parse_window
t0 = time.perf_counter()
problems = []
chosen = choose(read_export_samples(sys.argv[1], "otlp", problems=problems), parse_window(sys.argv[2]),
                cap=int(sys.argv[3]))
seconds = time.perf_counter() - t0
with open("/proc/self/status") as fh:
    peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) * 1024
print(peak, seconds, len(chosen), len(problems))
'''


def _attr(key: str, value: str) -> dict:
    return {"key": key, "value": {"stringValue": value}}


def _spans(i: int, n: int) -> tuple[list[dict], dict]:
    trace = f"{i + 1:032x}"
    start = START_NS + i * (WEEK_NS // n)
    root = f"{2 * i + 1:016x}"
    doc = f"Passage {i}: the pump of series {i % 89} carries a warranty of {1 + i % 5} years."
    question = f"How long is the warranty of pump series {i % 89} (ticket {i})?"
    answer = f"{1 + i % 5} years."

    def span(span_id: str, parent: str | None, name: str, kind: str, offset: int, *attrs: dict) -> dict:
        out = {"traceId": trace, "spanId": span_id, "name": name, "startTimeUnixNano": str(start + offset),
               "endTimeUnixNano": str(start + offset + 1000),
               "attributes": [_attr("openinference.span.kind", kind), *attrs]}
        if parent:
            out["parentSpanId"] = parent
        return out

    children = [span(f"{2 * i + 2:016x}", root, "retrieve", "RETRIEVER", 1,
                     _attr("retrieval.documents.0.document.id", f"doc-{i}"),
                     _attr("retrieval.documents.0.document.content", doc)),
                span(f"{2 * i + 2:015x}f", root, "llm", "LLM", 2,
                     _attr("llm.input_messages.0.message.role", "user"),
                     _attr("llm.input_messages.0.message.content", f"Context: {doc}\nQuestion: {question}"),
                     _attr("llm.output_messages.0.message.role", "assistant"),
                     _attr("llm.output_messages.0.message.content", answer))]
    return children, span(root, None, "chain", "CHAIN", 0, _attr("input.value", question), _attr("output.value", answer))


def _line(spans: list[dict]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "rag-app")]},
                                          "scopeSpans": [{"scope": {"name": "openinference"}, "spans": spans}]}]})


def write_export(path: Path, n: int) -> int:
    """``n`` traces as one request a line; returns the file's size in bytes."""
    roots: list[dict] = []
    with path.open("w", encoding="utf-8") as fh:
        for first in range(0, n, PER_REQUEST):
            batch = [_spans(i, n) for i in range(first, min(n, first + PER_REQUEST))]
            # the roots of the previous request's traces end now, after their children
            fh.write(_line([s for children, _ in batch for s in children] + roots) + "\n")
            roots = [root for _, root in batch]
        fh.write(_line(roots) + "\n")
    return path.stat().st_size


def measure(path: Path, window: str, cap: int) -> tuple[int, float, int, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), window, str(cap)], capture_output=True,
                         text=True, check=True)
    peak, seconds, kept, problems = out.stdout.split()
    return int(peak), float(seconds), int(kept), int(problems)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default="10000,100000", help="comma-separated export sizes (traces)")
    ap.add_argument("--window", default="1h", help="window size (default 1h: 168 windows in the week)")
    ap.add_argument("--max-per-window", type=int, default=100, help="the sample cap per window (default 100)")
    args = ap.parse_args()
    sizes = sorted(int(x) for x in args.traces.split(","))
    print(f"| traces | export | peak RSS | seconds | kept (cap {args.max_per_window} per {args.window} window) |")
    print("|---:|---:|---:|---:|---:|")
    rows = []
    with tempfile.TemporaryDirectory(prefix="langrag-traces-") as tmp:
        for n in sizes:
            path = Path(tmp) / f"export{n}.jsonl"
            size = write_export(path, n)
            t0 = time.perf_counter()
            peak, seconds, kept, problems = measure(path, args.window, args.max_per_window)
            assert problems == 0, f"{problems} problem(s) reading the synthetic export"
            rows.append((n, peak))
            print(f"| {n:,} | {size / 2**20:,.0f} MiB | {peak / 2**20:,.0f} MiB | {seconds:,.0f} | {kept:,} |",
                  flush=True)
            path.unlink()
            del t0
    if len(rows) > 1:
        (n0, p0), (n1, p1) = rows[0], rows[-1]
        print(f"\nmemory per trace beyond {n0:,} traces: {(p1 - p0) / (n1 - n0):,.1f} bytes")


if __name__ == "__main__":
    main()
