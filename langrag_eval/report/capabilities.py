"""The package's own report sections, registered through the same seam as an installed package's
(:func:`langrag_eval.report.sections.register_section`): vRAG-Eval's grades, THELMA's metrics and
its monitoring windows, the tournament and GRAMMAR. Each capability's evaluator declares the
section (its :class:`~langrag_eval.results.Section`); each renderer here draws it from the
summary the capability stored with the run (artifact ``vrag``, ``thelma``, ``tournament``,
``grammar``) and is left out when the run holds none, and gives the headline's rows for it. A run stored before sections were declared
draws the same sections from those artifacts, in this order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from .games import games_view
from .headline import row, thelma_intervals, top_cause
from .monitoring import windows_view
from .sections import SectionView, register_section, render_template
from .svg import bar_chart, heatmap, interval_chart
from .views import thelma_view, tournament_view

__all__: list[str] = []


def _vrag_charts(vrag: dict[str, Any]) -> dict[str, Markup]:
    dist = vrag.get("distribution") or {}
    charts = {"distribution": Markup(bar_chart([f"score {k}" for k in "12345"],
                                               [float(dist.get(k, 0)) for k in "12345"],
                                               title="Score distribution"))}
    subjects = {k: v for k, v in (vrag.get("subjects") or {}).items() if v.get("scored")}
    if subjects:
        from ..stats.intervals import wilson  # the report alone needs it

        names = sorted(subjects)
        shares = [wilson(int(subjects[n].get("accepted") or 0), int(subjects[n]["scored"])) for n in names]
        charts["subjects"] = Markup(interval_chart(
            [f"{n} (n={e.n})" for n, e in zip(names, shares)], [e.value for e in shares],
            [e.low for e in shares], [e.high for e in shares], bounds=(0.0, 1.0), percent=True,
            title=f"Accept rate per {vrag.get('group_by') or 'subject'}, 95 % Wilson interval"))
    agreement = vrag.get("agreement")
    if agreement and agreement.get("confusion"):
        names = agreement.get("names", ["judge", "human"])
        matrix = agreement["confusion"]
        total = sum(sum(r) for r in matrix) or 1
        labels = [str(x) for x in agreement.get("labels", range(1, len(matrix) + 1))]
        charts["confusion"] = Markup(heatmap([[c / total for c in row] for row in matrix], labels, labels,
                                             title=f"Confusion: rows {names[0]}, columns {names[1]}"))
    return charts


def _thelma_charts(thelma: dict[str, Any], intervals: dict[str, tuple[float | None, float | None, str]]
                   ) -> dict[str, Markup]:
    metrics = thelma.get("metrics") or {}
    # an interval from fewer than five scores says little: those metrics are in the table only
    keys = [k for k in metrics if metrics[k].get("mean") is not None and (metrics[k].get("n") or 0) >= 5]
    if not keys:
        return {}

    def end(k: str, i: int) -> float:
        v = intervals.get(k, (None, None, ""))[i]
        return float("nan") if v is None else float(v)
    methods = {intervals.get(k, (None, None, ""))[2] for k in keys}
    how = "bootstrap" if methods == {"bootstrap"} else "bootstrap or Student's t"
    return {"means": Markup(interval_chart(
        [f"{k.upper()} {metrics[k].get('name', '')}" for k in keys], [metrics[k]["mean"] for k in keys],
        [end(k, 0) for k in keys], [end(k, 1) for k in keys],
        title=f"Mean with its 95 % confidence interval ({how}), 0 to 1", bounds=(0.0, 1.0)))}


def _tournament_charts(tour: dict[str, Any], view: dict[str, Any]) -> dict[str, Markup]:
    """Drawn only where they carry information; ``view`` says in words what they would not show."""
    charts: dict[str, Markup] = {}
    ranking = [r for r in view["ranking"] if r["games"]]
    if view["separated"] and len(ranking) > 1:
        charts["ranking"] = Markup(interval_chart(
            [r["agent"] for r in ranking], [r.get("bt_rating") or float("nan") for r in ranking],
            [r.get("bt_low") if r.get("bt_low") is not None else float("nan") for r in ranking],
            [r.get("bt_high") if r.get("bt_high") is not None else float("nan") for r in ranking],
            title="Bradley-Terry rating (Elo scale) with 95 % bootstrap interval"))
    matrix = tour.get("win_matrix") or {}
    agents = tour.get("agents") or sorted(matrix)
    if matrix and len(agents) > 1 and view["played"]:
        rows, notes = [], []
        for a in agents:
            row, note = [], []
            for b in agents:
                cell = (matrix.get(a) or {}).get(b)
                played = a != b and cell and cell.get("games")
                row.append(cell.get("win") if played else None)
                note.append(f"tie {cell.get('tie', 0):.0%}" if played and cell.get("tie") else "")
            rows.append(row)
            notes.append(note)
        charts["wins"] = Markup(heatmap(rows, agents, agents, notes=notes, empty="no game",
                                        title="Share of games the row agent won against the column"))
    return charts


def _vrag(view: SectionView) -> Markup | None:
    vrag = view.artifacts.get("vrag")
    if not vrag:
        return None
    return render_template("sections/vrag.html.j2", vrag=vrag, charts={"vrag": _vrag_charts(vrag)})


def _thelma(view: SectionView) -> Markup | None:
    thelma = view.artifacts.get("thelma")
    if not thelma:
        return None
    intervals = thelma_intervals(thelma)
    return render_template("sections/thelma.html.j2", thelma=thelma, thelma_view=thelma_view(thelma),
                           thelma_intervals=intervals, charts={"thelma": _thelma_charts(thelma, intervals)})


def _windows(view: SectionView) -> Markup | None:
    thelma = view.artifacts.get("thelma")
    if not thelma or not thelma.get("windows"):
        return None
    questions = {i["id"]: i["question"] for i in view.page.get("items") or []}
    return render_template("sections/windows.html.j2", windows=windows_view(thelma, questions))


def _tournament(view: SectionView) -> Markup | None:
    tour = view.artifacts.get("tournament")
    if not tour:
        return None
    shown = tournament_view(tour)
    return render_template("sections/tournament.html.j2", tournament=tour, tournament_view=shown,
                           charts={"tournament": _tournament_charts(tour, shown)},
                           game_browser=games_view(view.store, view.run_id, view.artifacts))


def _grammar(view: SectionView) -> Markup | None:
    grammar = view.artifacts.get("grammar")
    return render_template("sections/grammar.html.j2", grammar=grammar) if grammar else None


# ---- their headline rows: the answer first, one line per measure

def _vrag_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    vrag = artifacts.get("vrag")
    if not isinstance(vrag, dict) or vrag.get("items") is None:
        return []
    from ..stats.intervals import wilson

    scored, total = int(vrag.get("scored") or 0), int(vrag.get("items") or 0)
    accepted = int(vrag.get("accepted") or round((vrag.get("accept_rate") or 0) * scored))
    e = wilson(accepted, scored) if scored else None
    unscored = vrag.get("unscored") or {}
    return [row("vRAG-Eval", "accept rate", "—" if e is None or e.value is None else f"{e.value:.0%}",
                e.low if e else None, e.high if e else None, scored, total,
                int(unscored.get("count") or total - scored), top_cause(unscored.get("by_cause")),
                percent=True, link="#vrag", method="wilson")]


def _thelma_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    thelma = artifacts.get("thelma")
    if not isinstance(thelma, dict) or not thelma.get("metrics"):
        return []
    intervals = thelma_intervals(thelma)
    total = len(thelma.get("samples") or []) or None
    rows = []
    for metric, m in thelma["metrics"].items():
        n, lost = int(m.get("n") or 0), int(m.get("unscored") or 0)
        low, high, method = intervals.get(metric, (None, None, ""))
        rows.append(row("THELMA", f"{metric.upper()} {m.get('name') or ''}".strip(),
                        "—" if m.get("mean") is None else f"{m['mean']:.3g}", low, high, n,
                        total or n + lost, lost, top_cause(m.get("causes")), link="#thelma", method=method))
    return rows


def _windows_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    thelma = artifacts.get("thelma")
    windows = thelma.get("windows") if isinstance(thelma, dict) else None
    if not windows:
        return []
    flagged = [w for w in windows if w.get("dropped")]
    return [row("monitoring", "windows with a flagged drop", f"{len(flagged)} of {len(windows)}", None,
                None, len(windows), len(windows), 0, None, link="#windows")]


def _tournament_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    tour = artifacts.get("tournament")
    if not isinstance(tour, dict) or not tour:
        return []
    view = tournament_view(tour)
    games = tour.get("games") or {}
    played = [r for r in view["ranking"] if r.get("games")]
    if view.get("separated") and played:
        top = played[0]
        what, value = "leader (Bradley-Terry rating)", f"{top['agent']} {top.get('bt_rating') or 0:,.0f}"
        low, high = top.get("bt_low"), top.get("bt_high")
    else:
        what, value, low, high = "ranking", "tied: no agent separated" if played else "no game played", None, None
    return [row("tournament", what, value, low, high, int(games.get("played") or 0),
                int(games.get("scheduled") or games.get("played") or 0), int(games.get("unscored") or 0),
                "unscored game" if games.get("unscored") else None, link="#tournament", method="bootstrap")]


def _grammar_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    grammar = artifacts.get("grammar")
    rows = []
    for agent, a in sorted(((grammar or {}).get("agents") or {}).items()) if isinstance(grammar, dict) else []:
        overall = (a or {}).get("overall") or {}
        accuracy = overall.get("accuracy")
        items = int((a or {}).get("items") or 0)
        # GRAMMAR's accuracy is robustness times the share outside gap groups (its eq. 2), not a
        # plain proportion: no interval is claimed for it
        rows.append(row("GRAMMAR", f"accuracy of {agent}", "—" if accuracy is None else f"{accuracy:.0%}",
                        None, None, items, items, 0, None, link="#grammar"))
    return rows



register_section("vrag", _vrag, anchor="vrag", stored_as=("vrag", "vRAG-Eval"), headline=_vrag_rows)
register_section("thelma", _thelma, anchor="thelma", stored_as=("thelma", "THELMA"), headline=_thelma_rows)
register_section("windows", _windows, anchor="windows", stored_as=("thelma", "monitoring"), headline=_windows_rows)
register_section("tournament", _tournament, anchor="tournament", stored_as=("tournament", "tournament"),
                 headline=_tournament_rows)
register_section("grammar", _grammar, anchor="grammar", stored_as=("grammar", "GRAMMAR"), headline=_grammar_rows)
