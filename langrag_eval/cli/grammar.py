"""``langrag-eval grammar``: GRAMMAR data generation and modular evaluation.

Examples::

    langrag-eval grammar schema --db sqlite:///company.sqlite
    langrag-eval grammar generate --db sqlite:///company.sqlite --templates templates.json --judge openai:gpt-4o
    #   (first run: the model writes templates.json; review and edit it, then run again to reload it)
    langrag-eval grammar generate --db demo --out dataset.jsonl        # packaged demo, no model needed
    langrag-eval grammar analyze --dataset dataset.jsonl --answers answers.jsonl --judge openai:gpt-4o
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataError
from ._common import add_judge_options, open_session, say, say_reuse, setup_judge, shown
from ._files import JUDGE_READS, declare_files, judge_file, output_file, store_path
from ._options import INPUT, OUTPUT, group, write_json

if TYPE_CHECKING:  # imported where used: --help loads none of the judging stack
    from ..runtime.identity import file_digest

if TYPE_CHECKING:
    from ..grammar import Style

__all__ = ["register"]

# The grammar package (SQLAlchemy, sqlglot) is imported inside the handlers: every langrag-eval
# command imports this module to register its subcommands and should not pay for it.


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("grammar", help="GRAMMAR: grounded test data from a database, "
                                   "modular evaluation", description="GRAMMAR (Li et al., 2024).")
    sub = parser.add_subparsers(dest="grammar_command", metavar="SUBCOMMAND")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])

    s = sub.add_parser("schema", help="show the schema a template generator sees, with warnings")
    group(s, INPUT).add_argument("--db", required=True, help="SQLAlchemy URL, SQLite file path, or 'demo'")
    _timeout_option(s)
    declare_files(s, reads={"--db": _db_file})
    s.set_defaults(handler=_schema)

    g = sub.add_parser("generate", help="templates (written by a model or reloaded) to query/answer pairs")
    group(g, INPUT).add_argument("--db", required=True, help="SQLAlchemy URL, SQLite file path, or 'demo'")
    _timeout_option(g)
    group(g, INPUT).add_argument("--templates", default=None,
                   help="editable JSON template file: reloaded when it exists, else written by the model "
                        "(default grammar_templates.json; the packaged templates for --db demo)")
    g.add_argument("--templates-only", action="store_true", help="stop after writing the template file")
    g.add_argument("--run-unreviewed", action="store_true",
                   help="run templates the model has just written before anyone reviewed them (by "
                        "default the command stops after writing them, so that no model-written SQL "
                        "reaches the database unread)")
    group(g, OUTPUT).add_argument("--out", default="grammar_dataset.jsonl", help="dataset JSONL")
    g.add_argument("--requirements", default="", help="extra requirements for the SQL template generator")
    g.add_argument("--max-templates", type=int, default=20)
    g.add_argument("--styles", default="short,long",
                   help="text template styles (clusters): short, long, or NAME=DESCRIPTION;... (default short,long)")
    g.add_argument("--texts-per-style", type=int, default=2)
    g.add_argument("--no-answer", choices=("drop", "flag"), default="drop",
                   help="queries whose SQL returns nothing (default drop)")
    g.add_argument("--multiple", choices=("drop", "flag"), default="drop",
                   help="queries whose SQL returns several answers (default drop)")
    g.add_argument("--null", choices=("drop", "unknown"), default="drop",
                   help="queries whose only answer is NULL: drop, or keep with the answer 'unknown' "
                        "(default drop; either way counted)")
    g.add_argument("--max-answer-rows", type=int, default=20,
                   help="distinct answers read per query; a query with more is dropped and counted "
                        "(default 20)")
    g.add_argument("--stratify", type=int, default=None, metavar="K",
                   help="keep exactly K text forms per SQL logic (stratified sampling)")
    g.add_argument("--max-combinations", type=int, default=5000, help="per template (default 5000)")
    g.add_argument("--seed", type=int, default=0)
    add_judge_options(g)
    declare_files(g, reads={"--db": _db_file, "--templates": _templates_file, **JUDGE_READS},
                  writes={"--out": "out", "--templates": _templates_file, "--store": store_path},
                  stores={"--store"})
    g.set_defaults(handler=_generate)

    a = sub.add_parser("analyze", help="grade answers against the dataset; groups, R, Acc, attribution")
    group(a, INPUT).add_argument("--dataset", required=True, help="dataset JSONL from grammar generate")
    group(a, INPUT).add_argument("--answers", required=True, help="answers JSONL (qid = dataset id), as agents write it")
    a.add_argument("--agent", action="append", default=None, help="only these agents (repeatable)")
    a.add_argument("--cluster-field", default="style", choices=("style", "template_id", "text_id"))
    a.add_argument("--compare", nargs=2, metavar=("A", "B"), default=None,
                   help="clusters to test against each other (default short long when present)")
    a.add_argument("--ragas-fact", action="store_true", help="also score RAGAS-Fact against the truth")
    a.add_argument("--selfcheck", action="store_true",
                   help="also score SelfCheck-QA (needs --answerer: the RAG system's LM)")
    a.add_argument("--answerer", default=None, help="model spec of the RAG system's LM for SelfCheck-QA")
    a.add_argument("--selfcheck-samples", type=int, default=4)
    group(a, INPUT).add_argument("--verdicts", default=None,
                   help="JSONL of other reference-free verdicts: qid, evaluator, verdict (bool or score), "
                        "optional agent")
    group(a, OUTPUT).add_argument("--out", default=None, help="also write the summary JSON here")
    add_judge_options(a)
    declare_files(a, reads={"--dataset": "dataset", "--answers": "answers", "--verdicts": "verdicts",
                            "--answerer": lambda args: judge_file(args.answerer) if args.answerer else None,
                            **JUDGE_READS},
                  writes={"--out": "out", "--store": store_path}, stores={"--store"})
    a.set_defaults(handler=_analyze)


def _db_file(args: argparse.Namespace) -> str | None:
    """The SQLite file ``--db`` names, if it names one."""
    text = args.db
    if text == "demo" or ("://" in text and not text.startswith("sqlite:///")):
        return None
    return text.removeprefix("sqlite:///") or None


def _templates_file(args: argparse.Namespace) -> str | None:
    if args.templates:
        return args.templates
    return None if args.db == "demo" else "grammar_templates.json"


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--statement-timeout", type=float, default=5.0, metavar="SECONDS",
                        help="the database stops any one statement after this long (default 5)")


def _db(text: str) -> str:
    from ..grammar import demo_database
    from ..grammar.db import normalise_url
    return str(demo_database()) if text == "demo" else normalise_url(text)


def _engine(args: argparse.Namespace) -> Any:
    """The read-only engine for ``--db``, every statement bounded by ``--statement-timeout``."""
    from ..grammar import readonly_engine
    return readonly_engine(_db(args.db), statement_timeout=args.statement_timeout)


def _schema(args: argparse.Namespace) -> int:
    from ..grammar import introspect
    schema = introspect(_engine(args))
    say(schema.describe())
    for w in schema.warnings:
        say(f"warning: {shown(w)}")
    return 0


def _styles(text: str, count: int) -> tuple[Style, ...]:
    from ..grammar import DEFAULT_STYLES, Style
    known = {s.name: s for s in DEFAULT_STYLES}
    out = []
    for part in (p.strip() for p in text.split(";" if "=" in text else ",")):
        if not part:
            continue
        name, sep, description = part.partition("=")
        if not sep and name.strip() not in known:
            raise ConfigError(f"--styles: unknown style {name!r}; use short, long or NAME=DESCRIPTION")
        desc = description.strip() if sep else known[name.strip()].description
        out.append(Style(name.strip(), desc, count))
    if not out:
        raise ConfigError("--styles names no style")
    return tuple(out)


def _generate(args: argparse.Namespace) -> int:
    from ..grammar import (
        TemplateSet, TextTemplateGenerator, author_templates, build_dataset, demo_templates_path,
        introspect, load_templates, phrase_templates, save_templates, stratify,
    )
    db = _engine(args)
    output_file(args.out, "--out")
    schema = introspect(db)
    for w in schema.warnings:
        say(f"warning: {shown(w)}", err=True)
    path = Path(args.templates) if args.templates else (
        demo_templates_path() if args.db == "demo" else Path("grammar_templates.json"))
    if path.is_dir():  # else the model would write templates, then fail to save them
        raise ConfigError(f"--templates {path}: is a directory; give a JSON file name")
    styles = _styles(args.styles, args.texts_per_style)
    authored_now = not path.is_file()
    if path.is_file():
        templates = load_templates(path)
        say(f"reloaded {len(templates.templates)} template(s) from {shown(path)}")
        unphrased = [t for t in templates.templates if not t.texts]
        if unphrased:
            setup = setup_judge(args)
            done = phrase_templates(unphrased, TextTemplateGenerator(setup.judge, styles),
                                    concurrency=args.concurrency)
            phrased = {t.id: t for t in done.templates}
            templates.templates = [phrased.get(t.id, t) for t in templates.templates]
            templates.problems += done.problems
            save_templates(path, templates)
            say(f"phrased {len(unphrased)} template(s) without text templates; saved to {shown(path)}")
    else:
        setup = setup_judge(args)
        authored = author_templates(schema, setup.judge, styles=styles, requirements=args.requirements,
                                    max_templates=args.max_templates, concurrency=args.concurrency)
        templates = TemplateSet(database=args.db if "://" not in args.db else None,
                                templates=authored.templates, problems=authored.problems)
        save_templates(path, templates)
        say(f"wrote {len(authored.templates)} template(s) to {shown(path)}: review and edit them, then run "
            "the same command again to reload the file"
            + ("" if args.run_unreviewed or args.templates_only else
               " (nothing was run against the database; --run-unreviewed runs them now)"))
    for problem in templates.problems:
        say(f"problem: {shown(problem)}", err=True)
    if args.templates_only or (authored_now and not args.run_unreviewed):
        return 0
    data = build_dataset(db, templates, schema=schema, on_no_answer=args.no_answer, on_multiple=args.multiple,
                         on_null=args.null, max_answer_rows=args.max_answer_rows,
                         max_combinations=args.max_combinations, seed=args.seed)
    queries = data.queries
    if args.stratify:
        queries, dropped = stratify(queries, args.stratify, seed=args.seed)
        say(f"stratified to {args.stratify} text form(s) per logic; {dropped} logic(s) with fewer dropped")
    for r in data.reports:
        say(f"{shown(r.template_id)}: {r.combinations} combinations, {r.logics} logics, {r.queries} queries "
            f"(no answer {r.no_answer}, several answers {r.multiple_answers}, NULL only {r.null_answer}, "
            f"more than {args.max_answer_rows} answers {r.too_many_answers})")
        for e in r.errors:
            say(f"  error: {shown(e)}", err=True)
        for w in r.warnings:
            say(f"  warning: {shown(w)}", err=True)
    if not queries:
        # An empty dataset is a failure to report, not a result: the file already there stays.
        kept = " (the existing file is left as it was)" if Path(args.out).exists() else ""
        raise DataError(f"no query could be generated from {len(templates.templates)} template(s); see "
                        f"the errors above; nothing written to {args.out}{kept}")
    data.model_copy(update={"queries": queries}).to_jsonl(args.out)
    say(f"{len(queries)} queries over {len({q.logic_id for q in queries})} SQL logics -> {shown(args.out)}")
    return 0


def _analyze(args: argparse.Namespace) -> int:
    from ..runtime.identity import file_digest
    from ..grammar import RagasFact, SelfCheckQA, evaluate_answers, read_dataset
    from ..grammar.grading import ReferenceGrader
    from ..grammar.io import read_verdicts, verdict_lookup
    from ..grammar.reliability import FunctionVerdict
    from ..models import resolve_judge
    from ..pipelines import read_answers
    from ..runtime import Judge, RetryPolicy
    if args.out:
        output_file(args.out, "--out")
    if args.selfcheck_samples < 1:
        raise ConfigError("--selfcheck-samples must be at least 1")
    queries = read_dataset(args.dataset)
    if args.compare:
        known = sorted({str(getattr(q, args.cluster_field)) for q in queries})
        unknown = [c for c in args.compare if c not in known]
        if unknown:
            raise ConfigError(f"--compare: no {args.cluster_field} cluster {', '.join(map(repr, unknown))} "
                              f"in {args.dataset}; clusters: {', '.join(known[:20])}")
    errors: list[DataError] = []
    answers = read_answers(args.answers, errors=errors)
    for e in errors:
        say(f"skipped: {shown(e)}", err=True)
    if args.agent:
        answers = [a for a in answers if a.agent in set(args.agent)]
        if not answers:
            raise ConfigError(f"no answers from agent(s) {', '.join(args.agent)} in {args.answers}")
    setup = setup_judge(args)
    config = {"dataset": str(Path(args.dataset).resolve()), "answers": str(Path(args.answers).resolve()),
              "agents": args.agent, "cluster_field": args.cluster_field, "compare": args.compare,
              "judge": setup.judge.model_id, "ragas_fact": args.ragas_fact, "selfcheck": args.selfcheck,
              "verdicts": args.verdicts}
    inputs = {"dataset": file_digest(args.dataset, what="dataset"),
              "answers": file_digest(args.answers, what="answers file")}
    if args.verdicts:
        inputs["verdicts"] = file_digest(args.verdicts, what="verdicts file")
    run_id = open_session(setup.store, args, "grammar", config, inputs=inputs, judge=setup.judge.model_id).run_id
    judge = setup.judge.for_run(run_id)
    free: dict[str, object] = {}
    if args.ragas_fact:
        free["ragas_fact"] = RagasFact(judge)
    if args.selfcheck:
        if not args.answerer:
            raise ConfigError("--selfcheck needs --answerer, the model spec of the RAG system's LM")
        answerer = Judge(resolve_judge(args.answerer).model, store=setup.store, run_id=run_id,
                         retry=RetryPolicy(max_attempts=args.max_attempts, timeout=args.timeout))
        free["selfcheck_qa"] = SelfCheckQA(answerer, judge, samples=args.selfcheck_samples)
    if args.verdicts:
        for name, table in read_verdicts(args.verdicts).items():
            free[name] = FunctionVerdict(verdict_lookup(table))
    summary = evaluate_answers(
        queries, answers, ReferenceGrader(judge), cluster_field=args.cluster_field,
        compare=tuple(args.compare) if args.compare else None, reference_free=free or None,  # type: ignore[arg-type]
        store=setup.store, run_id=run_id, concurrency=args.concurrency)
    if args.out:
        write_json(args.out, summary)
    say(f"run {shown(run_id)} (artifact 'grammar')")
    say_reuse(setup.store, run_id, indent="")
    for agent, r in summary["agents"].items():
        o = r["overall"]
        say(f"{shown(agent)}: {r['scored']} graded, {r['unscored']} unscored; groups gap {o['groups']['gap']}, "
            f"robust {o['groups']['robust']}, non-robust {o['groups']['non_robust']}; "
            f"R {_f(o['robustness'])}, Acc {_f(o['accuracy'])}; failures from retrieval "
            f"{r['attribution']['retrieval']}, from the LM {r['attribution']['lm']}")
        for c, m in r["clusters"].items():
            say(f"  {shown(c)}: R {_f(m['all']['robustness'])}, Acc {_f(m['all']['accuracy'])}, "
                f"retrieval view R {_f(m['retrieval_view']['robustness'])}")
        if r["comparison"]:
            c = r["comparison"]
            say(f"  {shown(c['a'])} vs {shown(c['b'])}: CMH p = {_f(c['p_value'])}, "
                f"Fisher p = {_f(c['fisher_p_value'])}")
        for name, rel in r.get("reference_free", {}).items():
            p, rc = rel["precision"], rel["recall"]
            say(f"  {shown(name)}: precision {_f(p['value'])} [{_f(p['low'])}, {_f(p['high'])}], "
                f"recall {_f(rc['value'])} [{_f(rc['low'])}, {_f(rc['high'])}]")
    for p in summary["problems"]:
        say(f"problem: {shown(p)}", err=True)
    return 0


def _f(x: object) -> str:
    return "n/a" if x is None else f"{x:.3f}"
