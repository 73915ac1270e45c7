"""``langrag-eval thelma FILE``: reference-free THELMA metrics with a diagnosis of what to improve.

    langrag-eval thelma traffic.jsonl --sources-col contexts --batched --out traffic.thelma.jsonl

FILE is JSONL or CSV/TSV with a query, its retrieved sources (a JSON list of texts; in CSV a cell
holding that JSON) and the response, per row; column names are options. Rows that cannot be read
are reported with file, line and field, and the other rows are still scored. Prints per-metric means
with spread and unscored counts, the Table 2 diagnosis, and judge calls and tokens per sample; writes
one JSON line per sample to ``--out``. The same command resumes the same run.

The run store receives the artifact ``thelma`` (read by the HTML report), a JSON object::

    {"version": 1,
     "mode": "per_component" | "batched",
     "metrics": {"<sp1|sp2|sqc|rp|rqc|sd|gr>": {"name": str, "mean": float|null, "std": float|null,
                 "min": float|null, "max": float|null, "n": int, "unscored": int,
                 "causes": {"<cause>": int}}},
     "diagnosis": {"on_means": [{"rule": str, "interpretation": str, "component": str,
                                 "evidence": {"<metric>": float}}],
                   "by_sample": [{"rule": str, "component": str, "interpretation": str,
                                  "samples": int, "share": float}],
                   "samples": int},
     "thresholds": {"default_low": float, "default_high": float, "low": {..}, "high": {..}},
     "usage": {"samples": int, "calls": int, "cached": int, "failed": int, "repairs": int,
               "prompt_tokens": int, "completion_tokens": int, "calls_per_sample": float|null,
               "tokens_per_sample": float|null},
     "samples": [{"id": str, "line": int, "scores": {"<metric>": float|null},
                  "unscored": {"<metric>": {"cause": str, "reason": str}}, "diagnosis": [str]}],
     "input": {"file": str, "rows": int, "rows_skipped": int,
               "problems": [{"line": int|null, "field": str|null, "message": str}]},
     "settings": {"metrics": [str], "sd_threshold": float, "embedder": str|null}}

``std`` is the sample standard deviation (0.0 for a single score); ``null`` where nothing was scored.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ..files.writing import atomic_write
from ._common import (
    add_judge_options, open_session, quiet_model_loading, report_issues, say, say_reuse, setup_judge, shown,
)
from ._columns import Column, add_column_options, choose_columns, table_columns
from ._files import JUDGE_READS, declare_files, output_file, store_path
from ._options import INPUT, SettingsOptions, add_results_option, add_table_options, group, results_path
from ._startup import loading
from ._traces import add_trace_options, format_windows, trace_samples, traces_digest, window_rows

# The options are made from the settings class, a light module of its own (no pydantic).
from ..thelma.thresholds import Thresholds  # noqa: E402
from ._options import THELMA_METRICS as METRICS, THELMA_SD_THRESHOLD as DEFAULT_SD_THRESHOLD  # noqa: E402

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..models.embeddings import Embedder, default_embedder
    from ..prompting.templates import prompt_names
    from ..runtime.identity import file_digest
    from ..thelma import METRICS, Thelma, ThelmaResult, Thresholds, metric_ids
    from ..thelma.decompose import load_task_prompt
    from ..thelma.metrics import registered_metrics
    from ..thelma.evaluator import DEFAULT_SD_THRESHOLD
    from ..thelma.io import read_samples

__all__ = ["ARTIFACT", "register"]

_THRESHOLDS = SettingsOptions(Thresholds, flags={"default_low": "--low", "default_high": "--high"},
                              exclude=("low", "high"))
ARTIFACT = "thelma"
_COLUMNS = (Column("question"), Column("contexts", "a JSON list of texts"), Column("answer"), Column("id", required=False))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "thelma", help="reference-free THELMA metrics of (query, sources, response), with a diagnosis",
        description="Score source precision, source query coverage, response precision, response query "
                    "coverage, self-distinctness and groundedness, and name the component to improve.")
    group(p, INPUT).add_argument("file", metavar="FILE", nargs="?",
                   help="JSONL, CSV or TSV: question, contexts (JSON list), answer (or --traces)")
    add_table_options(p, {})
    add_column_options(p, _COLUMNS[:3])
    p.add_argument("--metrics", default=",".join(METRICS),
                   help=f"comma-separated metrics: the paper's {','.join(METRICS)} (default) or any "
                        "registered by an installed package (an unknown name is refused with the list)")
    p.add_argument("--batched", action="store_true",
                   help="one judge call per match task and sample instead of one per component")
    p.add_argument("--sd-threshold", type=float, default=DEFAULT_SD_THRESHOLD,
                   help=f"cosine similarity from which two sentences repeat each other "
                        f"(default {DEFAULT_SD_THRESHOLD})")
    p.add_argument("--embedder", choices=("minilm", "none"), default="minilm",
                   help="sentence embeddings for self-distinctness: the packaged all-MiniLM-L6-v2 "
                        "(default) or none (self-distinctness is skipped)")
    _THRESHOLDS.add_to(p)
    p.add_argument("--threshold", action="append", default=[], metavar="METRIC=LOW[:HIGH]",
                   help="per-metric diagnosis thresholds, e.g. gr=0.9:0.95 (repeatable)")
    p.add_argument("--prompt", action="append", default=[], metavar="TASK=FILE",
                   help="your template for a THELMA task, e.g. match_essential=mine.txt (repeatable)")
    p.add_argument("--samples-in-flight", type=int, default=8, help="samples scored at once (default 8)")
    add_trace_options(p)
    add_results_option(p, ".thelma.jsonl", "per-sample JSONL")
    add_judge_options(p)
    declare_files(p, reads={"FILE": "file", "--traces": "traces", "--prompt": lambda a: [s.partition("=")[2] for s in a.prompt],
                            **JUDGE_READS},
                  writes={"--out": _results_path, "--store": store_path}, stores={"--store"})
    p.set_defaults(handler=handle)


def _results_path(args: argparse.Namespace) -> Path:
    # the input is FILE or, for production traces, the export --traces names
    return results_path(".thelma.jsonl")(argparse.Namespace(out=args.out, file=args.file or args.traces))


def _thresholds(args: argparse.Namespace) -> Thresholds:
    from ..thelma import metric_ids

    default_high = _THRESHOLDS.values(args)["default_high"]
    low: dict[str, float] = {}
    high: dict[str, float] = {}
    for spec in args.threshold:
        metric, _, values = spec.partition("=")
        lo, _, hi = values.partition(":")
        if metric not in metric_ids() or not lo:
            raise ConfigError(f"--threshold {spec!r}: expected METRIC=LOW[:HIGH] with METRIC one of "
                              f"{', '.join(metric_ids())}")
        try:
            low[metric] = float(lo)
            high[metric] = float(hi) if hi else max(float(lo), default_high)
        except ValueError:
            raise ConfigError(f"--threshold {spec!r}: LOW and HIGH must be numbers") from None
    return _THRESHOLDS.build(args, low=low, high=high)


def _prompts(specs: list[str]) -> dict[str, str]:
    # Checked here, before any sample: a template that fails later would leave every sample
    # unscored behind a run that exits 0.
    from ..prompting.templates import prompt_names
    from ..thelma.decompose import load_task_prompt
    from ..thelma.metrics import registered_metrics
    tasks = sorted({n.split("/", 1)[1] for n in prompt_names() if n.startswith("thelma/")}
                   | {t for m in registered_metrics() for t in m.tasks})
    out = {}
    for spec in specs:
        task, _, path = spec.partition("=")
        if not task or not path:
            raise ConfigError(f"--prompt {spec!r}: expected TASK=FILE, e.g. match_essential=mine.txt")
        if task not in tasks:
            raise ConfigError(f"--prompt {spec!r}: unknown THELMA task {task!r}; tasks: {', '.join(tasks)}")
        if not Path(path).is_file():
            raise ConfigError(f"--prompt {spec!r}: template file {path} not found")
        load_task_prompt(task, {task: path})  # a malformed template or a variable the task lacks
        out[task] = path
    return out


def _record(result: ThelmaResult, line: int | None) -> dict[str, Any]:
    return {"id": result.id, "line": line, "scores": result.score_values(),
            "unscored": {m: {"cause": u.cause, "reason": u.reason} for m, u in result.unscored().items()},
            "diagnosis": [f.rule for f in result.diagnosis]}


def format_summary(summary: dict[str, Any]) -> str:
    def num(x: float | None) -> str:
        return "   -" if x is None else f"{x:.3f}"
    lines = [f"  {'metric':<7}{'mean':>7}{'std':>7}{'scored':>8}{'unscored':>10}  name"]
    for metric, m in summary["metrics"].items():
        causes = ", ".join(f"{c} {n}" for c, n in sorted(m["causes"].items()))
        lines.append(f"  {metric:<7}{num(m['mean']):>7}{num(m['std']):>7}{m['n']:>8}{m['unscored']:>10}  "
                     f"{m['name']}" + (f" (unscored: {causes})" if causes else ""))
    d = summary["diagnosis"]
    lines.append("  diagnosis on the means: " + ("; ".join(
        f"{f['rule']} -> improve the {f['component']} ({f['interpretation']})" for f in d["on_means"])
        or "no Table 2 pattern"))
    for f in d["by_sample"]:
        lines.append(f"    {f['samples']} of {d['samples']} samples ({100 * f['share']:.0f}%): {f['rule']} "
                     f"-> {f['component']}")
    if sum(f["share"] for f in d["by_sample"]) > 1.0 + 1e-9:
        lines.append("    (a sample can match several rules, so these shares add up to more than 100 %)")
    if d["by_sample"] or d["on_means"]:
        lines.append("    (a rule names metrics by the abbreviations above: SQC-low is source query coverage "
                     "below its low threshold, -high above its high one)")
    u = summary["usage"]
    if u["samples"]:
        lines.append(f"  judge calls per sample {u['calls_per_sample']:.1f}, tokens per sample "
                     f"{u['tokens_per_sample']:.0f} (cached {u['cached']}, failed {u['failed']})")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    with loading():
        from ..models.embeddings import Embedder, default_embedder
        from ..runtime.identity import file_digest
        from ..thelma import Thelma, ThelmaResult
        from ..thelma.io import read_samples
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    if args.samples_in_flight < 1:
        raise ConfigError("--samples-in-flight must be at least 1")
    if not -1.0 <= args.sd_threshold <= 1.0:  # checked before the embedding model loads
        raise ConfigError(f"--sd-threshold {args.sd_threshold}: a cosine similarity lies in [-1, 1]")
    if args.embedder == "none" and "sd" in metrics:
        metrics = tuple(m for m in metrics if m != "sd")
        say("note: --embedder none: self-distinctness (sd) is skipped", err=True)
    if (args.file is None) == (args.traces is None):
        raise ConfigError("thelma: give FILE (a table of query, sources, response) or --traces PATH, "
                          "not both" if args.file else "thelma: give FILE or --traces PATH")
    thresholds = _thresholds(args)
    prompts = _prompts(args.prompt)
    out = output_file(_results_path(args), "--out")
    source = args.file or args.traces
    notes: list[str] = []
    columns_read = [args.id_col, "query", "sources", "response"]  # part of the run id: its older names
    if args.traces:
        samples, problems = trace_samples(args)
        lines = {s.id or "": None for s in samples}  # a trace has no line
        issues: list[Any] = list(problems)
        report_issues(issues, more="in the traces")
    else:
        given = {c.name: getattr(args, f"{c.name}_col") for c in _COLUMNS}
        chosen, notes = choose_columns(args.file, table_columns(args.file, args.format), _COLUMNS, given,
                                       format=args.format)
        columns_read[1:] = [chosen["question"], chosen["contexts"], chosen["answer"]]
        samples, lines, issues = read_samples(args.file, query=chosen["question"], sources=chosen["contexts"],
                                              response=chosen["answer"], id_col=chosen.get("id"), format=args.format)
        report_issues(issues)
    if not samples:
        raise DataError("no row could be read; nothing to score", path=source)
    if "sd" in metrics:
        quiet_model_loading()  # no progress bars around the summary or a one-line error
    embedder: Embedder | None = default_embedder() if "sd" in metrics else None
    setup = setup_judge(args, executor=True)
    thelma = Thelma(setup.judge, metrics=metrics, batched=args.batched, embedder=embedder,
                    sd_threshold=args.sd_threshold, thresholds=thresholds, templates=prompts)
    config = {"file": str(Path(source).resolve()),
              "columns": columns_read,
              "judge": setup.judge.model_id, "metrics": list(metrics), "mode": thelma.mode,
              "sd_threshold": args.sd_threshold, "embedder": embedder.model_id if embedder else None,
              "prompts": {k: Path(v).read_text(encoding="utf-8") if Path(v).is_file() else v
                          for k, v in thelma.templates.items()}}
    session = open_session(setup.store, args, "thelma", config, judge=setup.judge.model_id,
                           inputs={"file": traces_digest(args.traces) if args.traces
                                   else file_digest(args.file, what="THELMA file")},
                           judge_spec=setup.spec, items_on_executor=True)
    run_id = session.run_id
    results = session.evaluate(samples, {"thelma": thelma}, concurrency=args.samples_in_flight)["thelma"]
    # a sample the evaluator raised on is unscored in every metric, for the summary and the file
    results = [r if isinstance(r, ThelmaResult) else thelma.as_result(r, s) for s, r in zip(samples, results)]
    summary = thelma.summarize(results).details
    summary["samples"] = [_record(r, lines[r.id or ""]) for r in results]
    if args.traces:
        for record, sample in zip(summary["samples"], samples):  # what `gate --latest-window` reads
            record["window"] = sample.metadata["window"]
        counts = collections.Counter(s.metadata["window"] for s in samples)
        summary["windows"] = window_rows(samples, results, args)
        summary["window"] = {"size": args.window, "traces": dict(sorted(counts.items()))}
        meta = {s.id: s.metadata for s in samples}  # the report lists each window's worst items by trace
        for record in summary["samples"]:
            m = meta.get(record["id"]) or {}
            record.update(window=m.get("window"), trace_id=m.get("trace_id") or record["id"])
    summary["input"] = {"file": source, "rows": len(samples) + len(issues), "rows_skipped": len(issues),
                        "problems": [{"line": i.line, "field": i.field, "message": i.message} for i in issues]}
    summary["settings"] = {"metrics": list(metrics), "sd_threshold": args.sd_threshold,
                           "embedder": config["embedder"]}
    session.record({ARTIFACT: summary}, finished={"samples": len(results),
                                                  "means": {m: s["mean"] for m, s in summary["metrics"].items()}})
    with atomic_write(out) as fh:
        for result in results:
            fh.write(json.dumps({**_record(result, lines[result.id or ""]),
                                 "metrics": {m: v.model_dump(mode="json") for m, v in result.metrics.items()},
                                 "usage": result.usage.model_dump()}, ensure_ascii=False) + "\n")
    say(f"THELMA for {shown(source)} (run {shown(run_id)}, judge {shown(setup.judge.model_id)}, "
        f"{thelma.mode} matching)")
    for note in notes:  # with the results: a command that fails prints its error alone
        say(f"  {shown(note)}")
    if issues:
        say(f"  {len(issues)} row(s) skipped, see the warnings above")
    say(format_summary(summary))
    if args.traces:
        say(format_windows(summary["windows"], summary["window"]["traces"]))
    say_reuse(setup.store, run_id)
    say(f"  results: {shown(out)}")
    return 0
