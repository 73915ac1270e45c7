"""GRAMMAR generation on the paper's database: the five hand-checked templates of Appendix B.2, each
answer compared with the SQL run by hand; template authoring, saving and reloading after edits."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from langrag_eval.grammar import (
    SqlTemplate, Style, TemplateSet, TextTemplate, aauthor_templates, build_dataset, introspect,
    load_templates, save_templates, stratify,
)
from langrag_eval.runtime import Judge
from langrag_eval.testing import ScriptedModel

PAPER_TEMPLATES = [  # Appendix B.2, after manual review
    ("industry", "SELECT Industry FROM company WHERE Name = '[company.Name]';",
     "Which industry is [company.Name] in?"),
    ("headquarters", "SELECT Headquarters FROM company WHERE Name = '[company.Name]';",
     "Where is [company.Name] headquartered?"),
    ("nationality", "SELECT Nationality FROM people WHERE Name = '[people.Name]';",
     "What is the nationality of [people.Name]?"),
    ("college", "SELECT Graduation_College FROM people WHERE Name = '[people.Name]';",
     "Which college did [people.Name] graduate from?"),
    ("years", "SELECT e.Year_working FROM employment e JOIN company c ON e.Company_ID = c.Company_ID "
              "JOIN people p ON e.People_ID = p.People_ID WHERE c.Name = '[company.Name]' AND p.Name = '[people.Name]';",
     "How many years has [people.Name] worked at [company.Name]?"),
]
PLACEHOLDER = re.compile(r"'\[(\w+)\.(\w+)\]'")


@pytest.fixture
def company_db(spider_company_db: Path) -> Path:
    """The paper's database plus one person and one company whose names hold a quote (and a
    semicolon), employed together, so quoting is exercised end to end."""
    conn = sqlite3.connect(spider_company_db)
    conn.execute("INSERT INTO people VALUES (8, 33, 'Shaquille O''Neal', 'United States', 'Louisiana State')")
    conn.execute("INSERT INTO company VALUES (20, 'Ben & Jerry''s; Inc', 'USA', 'Food', 1.1, 0.2, 0.9, 2.3)")
    conn.execute("INSERT INTO employment VALUES (20, 8, 6)")
    conn.commit()
    conn.close()
    return spider_company_db


def paper_set() -> TemplateSet:
    return TemplateSet(templates=[SqlTemplate(id=i, sql=sql, texts=(TextTemplate(id="short-1", style="short", text=t),))
                                  for i, sql, t in PAPER_TEMPLATES])


def by_hand(db: Path, template_sql: str, values: dict[str, object]) -> list[tuple]:
    """The template with each value written into the SQL as an escaped literal, run directly."""
    def literal(m: re.Match[str]) -> str:
        value = values[f"{m[1]}.{m[2]}".lower()]
        return "'" + str(value).replace("'", "''") + "'"
    conn = sqlite3.connect(db)
    try:
        return list(dict.fromkeys(conn.execute(PLACEHOLDER.sub(literal, template_sql)).fetchall()))
    finally:
        conn.close()


def test_paper_templates_generate_pairs_equal_to_hand_sql(company_db: Path) -> None:
    data = build_dataset(company_db, paper_set())
    reports = {r.template_id: r for r in data.reports}
    # 20 companies, 8 people; the join has 6 employed (company, person) pairs out of 20 x 8.
    assert {k: r.logics for k, r in reports.items()} == {
        "industry": 20, "headquarters": 20, "nationality": 8, "college": 8, "years": 6}
    assert reports["years"].combinations == 160 and reports["years"].no_answer == 154
    assert all(not r.errors for r in reports.values())
    for q in data.queries:
        template = next(sql for i, sql, _ in PAPER_TEMPLATES if i == q.template_id)
        keys = [f"{t}.{c}".lower() for t, c in PLACEHOLDER.findall(template)]
        names = {k: None for k in keys}
        values = {k: q.params[f"p{list(names).index(k)}"] for k in names}
        rows = by_hand(company_db, template, values)
        assert len(rows) == 1, q
        assert q.answer_values == [v for v in rows[0]]
        assert q.flag is None
    quoted = [q for q in data.queries if "O'Neal" in q.question]
    assert {q.template_id for q in quoted} == {"nationality", "college", "years"}
    years = next(q for q in quoted if q.template_id == "years")
    assert years.question == "How many years has Shaquille O'Neal worked at Ben & Jerry's; Inc?"
    assert years.answer == "6"
    assert next(q for q in data.queries if q.question == "Where is Ben & Jerry's; Inc headquartered?").answer == "USA"


def test_real_values_bind_without_text_conversion(company_db: Path) -> None:
    # A REAL primary key and float answers: bound values match, answers read as the database wrote them.
    t = SqlTemplate(id="sales", sql="SELECT Sales_in_Billion FROM company WHERE Name = '[company.Name]'",
                    texts=(TextTemplate(id="a", style="short", text="Sales of [company.Name]?"),))
    data = build_dataset(company_db, [t])
    exxon = next(q for q in data.queries if "ExxonMobil" in q.question)
    assert exxon.answer == "433.5"
    hsbc = next(q for q in data.queries if "HSBC" in q.question)
    assert hsbc.answer == "102" and hsbc.answer_values == [102.0]


def test_multiple_answers_dropped_or_flagged(company_db: Path) -> None:
    t = SqlTemplate(id="by-industry", sql="SELECT Name FROM company WHERE Industry = '[company.Industry]'",
                    texts=(TextTemplate(id="a", style="short", text="Which company is in [company.Industry]?"),))
    dropped = build_dataset(company_db, [t])
    # Industries: Oil and gas, Banking, Conglomerate, Retailing, Automotive, Food: 3 have one company.
    assert dropped.reports[0].multiple_answers == 3
    assert sorted(q.answer for q in dropped.queries) == ["Ben & Jerry's; Inc", "Volkswagen Group", "Walmart"]
    flagged = build_dataset(company_db, [t], on_multiple="flag")
    several = [q for q in flagged.queries if q.flag == "multiple_answers"]
    assert len(several) == 3 and len(flagged.queries) == 6
    banking = next(q for q in several if "Banking" in q.question)
    assert len(banking.answer_values) == 7


def test_stratify_balances_forms_per_logic(company_db: Path) -> None:
    texts = (TextTemplate(id="short-1", style="short", text="Industry of [company.Name]?"),
             TextTemplate(id="short-2", style="short", text="[company.Name]: industry?"),
             TextTemplate(id="long-1", style="long", text="Could you please tell me the industry of [company.Name]?"))
    unbalanced = [SqlTemplate(id="industry", sql=PAPER_TEMPLATES[0][1], texts=texts),
                  SqlTemplate(id="hq", sql=PAPER_TEMPLATES[1][1], texts=texts[:1])]
    data = build_dataset(company_db, unbalanced)
    kept, dropped = stratify(data.queries, 2, seed=3)
    assert dropped == 20  # the hq logics have one form only
    per_logic: dict[str, list[str]] = {}
    for q in kept:
        per_logic.setdefault(q.logic_id, []).append(q.style)
    assert len(per_logic) == 20
    assert all(sorted(styles) == ["long", "short"] for styles in per_logic.values())


SQL_REPLY = """<templates>
1. SELECT Industry FROM company WHERE Name = '[company.Name]';
2. SELECT Nationality FROM people WHERE Name = '[people.Name]';
3. DELETE FROM people WHERE Name = '[people.Name]';
4. SELECT Nickname FROM people WHERE Name = '[people.Name]';
5. SELECT Name FROM company WHERE Name = '[company.Name]';
</templates>"""


def text_reply(prompt: str) -> str:
    if "[company.Name]" in prompt and "Industry" in prompt:
        return json.dumps({"short": ["What industry is [company.Name] in?", "Industry of the firm?"],
                           "long": ["For my market report, which industry does [company.Name] operate in?"]})
    if "Nationality" in prompt:
        return json.dumps({"short": ["Where is [people.Name] from?"], "long": ["Which country is [people.Name] a national of, please?"]})
    return json.dumps({"short": ["Is [company.Name] named [company.Name]?"], "long": []})


def scripted_author() -> ScriptedModel:
    def reply(prompt: str) -> str:
        return SQL_REPLY if "SQL query templates" in prompt else text_reply(prompt)
    return ScriptedModel(reply, model_id="author")


async def test_authoring_validates_saves_and_reloads_after_edit(company_db: Path, tmp_path: Path) -> None:
    schema = introspect(company_db)
    model = scripted_author()
    result = await aauthor_templates(schema, Judge(model), styles=(Style("short", "brief", 2), Style("long", "wordy", 1)))
    assert "ExxonMobil" not in model.prompts[0] and "Company_ID" in model.prompts[0]  # schema only, no rows
    by_sql = {t.sql.split(" FROM")[0]: t for t in result.templates}
    assert not by_sql["SELECT Industry"].issues
    assert [t.text for t in by_sql["SELECT Industry"].texts] == [
        "What industry is [company.Name] in?", "For my market report, which industry does [company.Name] operate in?"]
    assert any("lacks placeholder(s) [company.name]" in p for p in result.problems)
    assert any("only SELECT" in i for i in by_sql["DELETE"].issues)
    assert any("has a column Nickname" in i for i in by_sql["SELECT Nickname"].issues)
    assert any("warning: projects Name" in i for i in by_sql["SELECT Name"].issues)
    assert not by_sql["DELETE"].texts  # not phrased until fixed

    path = save_templates(tmp_path / "templates.json", TemplateSet(templates=result.templates))
    # The reviewer fixes the Nickname template, deletes the DELETE, adds one without id or texts,
    # and breaks one by removing its sql.
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["templates"] = [t for t in raw["templates"] if not t["sql"].startswith("DELETE")]
    for t in raw["templates"]:
        if "Nickname" in t["sql"]:
            t["sql"] = t["sql"].replace("Nickname", "Graduation_College")
            t["texts"] = ["Which college did [people.Name] attend?"]
    raw["templates"].append({"sql": "SELECT Headquarters FROM company WHERE Name = '[company.Name]'"})
    raw["templates"].append({"id": "broken", "texts": []})
    path.write_text(json.dumps(raw, indent=2, ensure_ascii=False), encoding="utf-8")

    reloaded = load_templates(path)
    assert len(reloaded.problems) == 1
    problem = reloaded.problems[0]
    assert "templates.json:" in problem and 'field "templates[5].sql"' in problem
    line = int(problem.split("templates.json:")[1].split(":")[0])
    assert '"id": "broken"' in path.read_text().splitlines()[line - 1]
    ids = [t.id for t in reloaded.templates]
    assert ids[-1] == "t6" and len(ids) == 5
    data = build_dataset(company_db, reloaded)
    reports = {r.template_id: r for r in data.reports}
    college = next(t for t in reloaded.templates if "Graduation_College" in t.sql)
    assert reports[college.id].logics == 8 and not reports[college.id].errors
    assert any("no usable text template" in e for e in reports["t6"].errors)  # added without texts
    assert any(q.question == "Which college did Shaquille O'Neal attend?" and q.answer == "Louisiana State"
               for q in data.queries)


def test_reload_rejects_invalid_json_with_line(tmp_path: Path) -> None:
    from langrag_eval.errors import DataError
    bad = tmp_path / "t.json"
    bad.write_text('{\n  "templates": [\n    {"id": "a", "sql": "SELECT 1",}\n  ]\n}\n', encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_templates(bad)
    assert str(info.value).startswith(f"{bad}:3:")
