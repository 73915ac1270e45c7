"""Cookbook 6: measure your judge against your experts before you trust its grades.

The question it answers: "an LLM judge will grade thousands of answers for me; on the answers my
experts have already graded, does it give the same grades, and where it does not, is it too lenient
or too strict?"

vRAG-Eval grades an answer 1-5 against the expected answer (the label) and accepts it at 4 or more.
The paper validated its judge by comparing it with human experts on the same items, exactly and after
mapping to accept/reject. Here: a small labelled file with two experts' scores, the vRAG-Eval grader
on every row, then ``langrag_eval.stats.agreement``: exact and accept/reject agreement, Cohen's kappa
(agreement beyond chance; quadratic-weighted kappa also credits near misses), the 5x5 confusion
matrix, reject rates and rank correlation. The experts' agreement with each other is the ceiling:
expect no judge to agree with them better than they agree among themselves.

The same from a shell:

    langrag-eval grade labelled.csv --human-cols expert_a,expert_b --judge openai:gpt-4o

Run it:      python cookbooks/06_judge_vs_experts.py [--out DIR] [--file YOUR.csv]
Real model:  change the one line marked below.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path

from _scripted import build_judge, scripted_judge

from langrag_eval.grading import Columns, VragGrade, VragGrader, read_grading_file, summarize
from langrag_eval.runtime import RunStore, run_id_for
from langrag_eval.stats import agreement, combine_median

# ---------------------------------------------------------------------------------------------
# THE ONE LINE TO CHANGE for a real model ("provider:model", resolved like `--judge`; openai:...
# needs `pip install langchain-openai` and OPENAI_API_KEY; "local" is the offline llama.cpp model):
JUDGE = scripted_judge()  # swap for: JUDGE = "openai:gpt-4o"
# ---------------------------------------------------------------------------------------------

# Answers an HR assistant gave, each with the expected answer and two experts' 1-5 scores.
LABELLED = [
    ("hr-01", "How many vacation days do full-time employees get?", "25 days per year.",
     "Full-time employees get 25 vacation days per year.", 5, 5),
    ("hr-02", "When is the expense report due?", "Within 30 days of the purchase.",
     "Expense reports are due within 30 days of the purchase.", 5, 4),
    ("hr-03", "Can I carry over unused vacation days?", "Up to 5 unused days carry over to the next year.",
     "Yes, you can carry over unused days.", 3, 2),
    ("hr-04", "Who approves remote work?", "The team manager approves remote work requests.",
     "HR approves all remote work requests.", 1, 2),
    ("hr-05", "What is the per-diem for domestic travel?", "45 euros per day.",
     "The per-diem for domestic travel is 45 euros a day.", 5, 5),
    ("hr-06", "How much notice is needed before parental leave?", "Eight weeks of notice.",
     "You should tell your manager early.", 1, 1),
    ("hr-07", "Is there a bike-to-work allowance?", "Yes, 20 euros per month for employees who cycle to work.",
     "Yes, employees who cycle to work receive 20 euros each month.", 5, 5),
    ("hr-08", "How are overtime hours compensated?", "As time off at 1.5 times the hours worked.",
     "Overtime is paid out in cash at the normal hourly rate.", 1, 1),
    ("hr-09", "What laptop do new hires get?", "A 14-inch laptop with 16 GB of memory.",
     "New hires receive a 14-inch laptop.", 3, 4),
    ("hr-10", "Where do I report a security incident?", "To the security desk at security@example.com within one hour.",
     "Report it to security@example.com within one hour.", 4, 5),
    ("hr-11", "How long is the probation period?", "Six months.",
     "", 1, 1),                                          # the app timed out: nothing to grade
    ("hr-12", "Does the company match pension contributions?", "Yes, up to 4 percent of salary.",
     "The company matches pension contributions up to 6 percent of salary.", 2, 2),
]


def write_labelled(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "label", "answer", "expert_a", "expert_b"])
        w.writerows(LABELLED)
    return path


def _f(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"


def print_report(title: str, r) -> None:
    a, b = r.names
    print(f"\n{title}: {r.compared} items compared ({', '.join(r.notes) or 'none left out'})")
    print(f"  exact agreement {_f(r.exact)}, accept/reject agreement {_f(r.binary)}")
    print(f"  Cohen's kappa {_f(r.kappa)}, quadratic-weighted kappa {_f(r.weighted_kappa)}, "
          f"Kendall tau-b {_f(r.kendall_tau.statistic if r.kendall_tau else None)}")
    print(f"  reject rate: {a} {_f(r.reject_rate[a])}, {b} {_f(r.reject_rate[b])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for results (default: a temp folder)")
    parser.add_argument("--file", type=Path, default=None,
                        help="your labelled CSV/JSONL with columns id, question, label, answer, expert_a, expert_b")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="langrag-cookbook-06-"))
    out.mkdir(parents=True, exist_ok=True)
    path = args.file or write_labelled(out / "labelled.csv")

    # 1. Read the labelled file. Problems in single rows (an empty answer, a score of 7) are reported
    #    with file, line and field; those rows are still read and graded where possible.
    data = read_grading_file(path, Columns(humans=("expert_a", "expert_b")))
    for issue in data.issues:
        print(f"note: {issue}")

    # 2. Grade every answer with vRAG-Eval (resumable: results are stored per item in the run).
    store = RunStore(out / "runs.sqlite")
    judge = build_judge(JUDGE, store=store)
    settings = {"file": str(path), "judge": judge.model_id}
    run_id = store.open_run("cookbook-06", settings, run_id_for("cookbook-06", settings), judge=judge.model_id)
    grades = VragGrader(judge).evaluate_many(data.samples, run_id=run_id)
    ids = [s.id for s in data.samples]
    judge_scores = {i: g.score if isinstance(g, VragGrade) else None for i, g in zip(ids, grades)}

    # 3. Compare. The experts are combined by the median; with two experts that is one of the two,
    #    picked at random with a fixed seed, as the vRAG-Eval paper did. Items the judge could not
    #    grade are excluded and counted, never scored 0.
    experts = combine_median(data.humans, even="random", seed=0)
    report = agreement(judge_scores, experts, names=("judge", "experts"))
    between_experts = agreement({i: h.get("expert_a") for i, h in data.humans.items()},
                                {i: h.get("expert_b") for i, h in data.humans.items()},
                                names=("expert_a", "expert_b"))
    print_report("Judge vs experts (median)", report)
    print("  confusion matrix, rows = judge 1..5, columns = experts 1..5:")
    for level, row in zip(report.labels, report.confusion):
        print(f"    {level}: " + " ".join(f"{n:2d}" for n in row))
    (both_reject, too_strict), (too_lenient, both_accept) = report.binary_confusion
    print(f"  accept/reject: both reject {both_reject}, both accept {both_accept}, judge rejects what "
          f"the experts accept {too_strict}, judge accepts what the experts reject {too_lenient}")
    print_report("Expert A vs expert B (the ceiling)", between_experts)

    # 4. Read the disagreements before deciding: they tell you how the judge errs.
    print("\nWhere the judge and the experts disagree on accept/reject:")
    for s, g in zip(data.samples, grades):
        if isinstance(g, VragGrade) and experts.get(s.id) is not None and g.accepted != (experts[s.id] >= 4):
            print(f"  {s.id}: judge {g.score}, experts {experts[s.id]}: {s.question!r} -> {s.answer!r}")
    for s, g in zip(data.samples, grades):
        if not isinstance(g, VragGrade):
            print(f"  {s.id}: not graded ({g.cause}: {g.reason})")

    summary = summarize(grades, ids=ids, agreement=report.as_dict())
    store.put_artifact(run_id, "vrag", summary)                 # what the HTML report reads
    store.finish_run(run_id, {"items": len(ids)})
    result = {"judge_scores": judge_scores, "experts": experts, "agreement": report.as_dict(),
              "between_experts": between_experts.as_dict(), "summary": summary}
    (out / "agreement.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\nresults in {out / 'agreement.json'}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
