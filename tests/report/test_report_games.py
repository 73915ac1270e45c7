"""The tournament's game browser: a tournament run by the real command with a scripted judge, its
report opened in headless Chromium: every game played, its query, both answers as the agents gave
them, the verdict in each order with the judge's reply, and the documents the judge was shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langrag_eval.cli import main
from langrag_eval.runtime import RunStore

JUDGE = {
    "<document>": 'On topic.\n{"reason": "names the answer", "relevance": 2}',
    "<answer_a>\ngood": "A is better: it names Paris.\n[[A]]",
    "<answer_a>\nbad": "B is better: Lyon is wrong.\n[[B]]",
}
ANSWERS = {("q1", "good"): "good: Paris", ("q1", "bad"): "bad: Lyon",
           ("q2", "good"): "good: Shakespeare", ("q2", "bad"): "bad: Marlowe"}


@pytest.fixture(scope="module")
def games_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunStore, str]:
    folder = tmp_path_factory.mktemp("games")
    (folder / "queries.csv").write_text("qid,query\nq1,capital?\nq2,author?\n", encoding="utf-8")
    (folder / "documents.csv").write_text(
        "qid,did,document,agent\nq1,d1,Paris is the capital,good\nq1,d1,Paris is the capital,bad\n"
        "q2,d2,Shakespeare wrote it,good\n", encoding="utf-8")
    (folder / "answers.csv").write_text("qid,agent,answer\n" + "".join(
        f"{q},{a},{t}\n" for (q, a), t in ANSWERS.items()), encoding="utf-8")
    (folder / "judge.json").write_text(json.dumps(JUDGE), encoding="utf-8")
    store = folder / "runs.sqlite"
    assert main(["tournament", *(str(folder / n) for n in ("queries.csv", "documents.csv", "answers.csv")),
                 "--judge", f"scripted:{folder / 'judge.json'}", "--store", str(store),
                 "--tournaments", "20", "--bootstrap", "20"]) == 0
    run = RunStore(store).runs()[0]["id"]
    out = folder / "report.html"
    assert main(["report", run, "--store", str(store), "--out", str(out)]) == 0
    return out, RunStore(store), run


def test_every_game_with_answers_verdicts_reasons_and_documents(games_report, open_report) -> None:
    path, store, run = games_report
    page = open_report(path)
    p = page.page
    assert page.errors == [] and all(url.startswith("file:") for url in page.requests)
    played = store.get_artifact(run, "tournament")["games"]["played"]
    games = p.locator("#game-list details.game")
    assert games.count() == played == 2
    for i in range(games.count()):
        game = games.nth(i)
        qid, a, b = (game.get_attribute(k) for k in ("data-qid", "data-agent-a", "data-agent-b"))
        assert not game.locator(".answers").is_visible()  # collapsed until opened
        game.locator("summary").click()
        assert game.locator(".answer-a p").inner_text() == ANSWERS[(qid, a)]
        assert game.locator(".answer-b p").inner_text() == ANSWERS[(qid, b)]
        assert game.locator(".game-query").inner_text() == {"q1": "capital?", "q2": "author?"}[qid]
        # both orders asked; each verdict read by agent, with the judge's own reply
        verdicts = game.locator("li.verdict")
        assert verdicts.count() == 2
        for v in range(2):
            text = verdicts.nth(v).inner_text()
            assert "good better" in text and ("it names Paris" in text or "Lyon is wrong" in text)
        assert "good wins" in game.locator(".game-outcome").inner_text()
        docs = game.locator("ol.documents li")
        assert docs.count() >= 1
        if qid == "q1":
            assert docs.first.locator("code").inner_text() == "d1"
            assert docs.first.locator(".reason").inner_text() == "Paris is the capital"


def test_game_browser_fits_a_phone(games_report, open_report) -> None:
    path, _, _ = games_report
    p = open_report(path).page
    p.set_viewport_size({"width": 390, "height": 800})
    p.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert p.evaluate("document.documentElement.scrollWidth") <= 390


EVIL = "evil\u202eabc"  # a right-to-left override in an agent's name


def test_a_right_to_left_override_in_a_name_reorders_nothing_around_it(tmp_path: Path, open_report) -> None:
    (tmp_path / "queries.csv").write_text("qid,query\nq1,capital?\n", encoding="utf-8")
    (tmp_path / "documents.csv").write_text(
        f"qid,did,document,agent\nq1,d1,Paris is the capital,good\nq1,d1,Paris is the capital,{EVIL}\n",
        encoding="utf-8")
    (tmp_path / "answers.csv").write_text(f"qid,agent,answer\nq1,good,good: Paris\nq1,{EVIL},bad: Lyon\n",
                                          encoding="utf-8")
    (tmp_path / "judge.json").write_text(json.dumps(JUDGE), encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    assert main(["tournament", *(str(tmp_path / n) for n in ("queries.csv", "documents.csv", "answers.csv")),
                 "--judge", f"scripted:{tmp_path / 'judge.json'}", "--store", str(store), "--run", f"run-{EVIL}",
                 "--tournaments", "5", "--bootstrap", "5"]) == 0
    out = tmp_path / "report.html"
    assert main(["report", f"run-{EVIL}", "--store", str(store), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    title = html[html.index("<title>"):html.index("</title>")]
    svgs = "".join(html.split("<svg")[1:])
    assert "\u202e" not in title and "\u202e" not in svgs.split("</svg>")[0]
    p = open_report(out).page

    def left_to_right(selectors: list[str], within: str) -> bool:
        xs = [p.locator(within).locator(s).first.bounding_box()["x"] for s in selectors]
        return xs == sorted(xs) and len(set(xs)) == len(xs)

    # the attack works in this browser: the same markup without isolation is reordered
    p.evaluate(f"""() => {{ const c = document.createElement('p'); c.id = 'control';
        c.innerHTML = 'q1: <span class="a">{EVIL}</span> vs <span class="b">good</span> <span class="c">x</span>';
        c.querySelectorAll('span').forEach(s => s.style.unicodeBidi = 'normal');
        document.body.prepend(c); }}""")
    assert not left_to_right([".a", ".b", ".c"], "#control")
    game = p.locator("#game-list details.game").first
    game.locator("summary").click()
    assert left_to_right(["bdi >> nth=1", "bdi >> nth=2", ".game-outcome"], "#game-list details.game summary")
    assert left_to_right(["code", "strong"], "#run-status")
    assert EVIL in p.locator("#ranking").inner_text()  # shown as given, not stripped
