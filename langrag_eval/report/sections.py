"""The report's capability sections, read from what each evaluator declared, never from its name.

Each evaluator that ran in a run stored its :class:`~langrag_eval.results.Declaration` with it
(artifact ``declared/<task>``, :func:`langrag_eval.run.batch.declare_in_run`), in the order the
evaluators started. Its ``sections`` name the report sections it draws: a title and the ``kind``
of renderer. The page draws them in that order, after the answer (summary, comparison, scores by
evaluator) and before the items, the unscored judgments, the judge, the settings and usage.

A renderer is a function of a :class:`SectionView` that returns the section's HTML, from its
heading on (``view.heading``), or None when the run holds nothing for it to show (the section is
then left out of the page and its navigation). Kinds are found, in this order:

- registered with :func:`register_section` (the package's own: ``vrag``, ``thelma``,
  ``windows``, ``tournament``, ``grammar``, registered in :mod:`langrag_eval.report.capabilities`
  through this same function);
- an installed package's entry point in the group ``langrag_eval.report_sections``, named by its
  namespaced id as evaluators are (``mypkg/citations``)::

      [project.entry-points."langrag_eval.report_sections"]
      citations = "mypkg.report:citations_section"     # def citations_section(view) -> str | None

- else (the kind ``scores``, or a package that is not installed where the report is built) the
  generic section: the title, the evaluator's description and its scores read from the judgments
  stored with the run (mean with its 95 % interval, pass rate, unscored by cause).

A renderer's HTML goes into the page as it is: text that came from a model or a user must be
escaped by it (``markupsafe.escape``, or a template with autoescape); the page's
Content-Security-Policy runs no script of it either way. ``view.heading`` is ``Markup``: a plain
string added to it is escaped, so build on it with ``Markup(...).format(...)``.

>>> from langrag_eval.results import Declaration, ScoreScale, Section
>>> from langrag_eval.runtime import RunStore
>>> store = RunStore(":memory:")
>>> run = store.open_run("run", {})
>>> store.put_artifact(run, "declared/mypkg/citations", {"description": "Cites a source?",
...     "scores": {"cited": ScoreScale(0, 1, binary=True)._asdict()},
...     "sections": [Section("Citations")._asdict()]})
>>> cited = ScoreScale(0, 1, binary=True).score("cited", 1)
>>> store.put_judgment(run, "q1", "mypkg/citations", {"scores": [cited.model_dump()]}, scored=True)
>>> [(s.anchor, s.title) for s in drawn_sections(store, run, store.artifacts(run), {})]
[('evaluator-mypkg-citations', 'Citations')]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import jinja2
from markupsafe import Markup

from ..errors import ConfigError
from ..results import Declaration, Score, Section, Summary, summarize_scores
from ..run.batch import DECLARED_PREFIX, read_declaration
from ..runtime import RunStore
from ..runtime.items import current_judgments

__all__ = ["GENERIC", "REPORT_SECTIONS", "DrawnSection", "Headline", "Renderer", "SectionView", "drawn_sections",
           "headline_rows", "register_section", "registered_anchors", "render_template"]

REPORT_SECTIONS = "langrag_eval.report_sections"
GENERIC = "scores"

ENV = jinja2.Environment(loader=jinja2.PackageLoader("langrag_eval.report", "templates"),
                         # artifacts from older or partial runs may lack optional keys: render "—"
                         autoescape=True, undefined=jinja2.ChainableUndefined,
                         trim_blocks=True, lstrip_blocks=True)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or isinstance(value, jinja2.Undefined):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "—" if not math.isfinite(value) else f"{value:.{digits}g}"
    return str(value)


def _pct(value: Any) -> str:
    return "—" if not isinstance(value, (int, float)) or not math.isfinite(value) else f"{value:.0%}"


ENV.filters["fmt"] = _fmt
# where no <bdi> can go (the page's <title>): embeddings, overrides and isolates dropped
ENV.filters["nobidi"] = lambda text: str(text).translate(
    dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
ENV.filters["pct"] = _pct
# a section's template keeps its last line's newline, as the same text inside the page would
_SECTION_ENV = ENV.overlay(keep_trailing_newline=True)


def render_template(name: str, **context: Any) -> Markup:
    """One of the report's templates (``sections/<kind>.html.j2``) with the page's filters."""
    return Markup(_SECTION_ENV.get_template(name).render(**context))


@dataclass
class SectionView:
    """What a section's renderer is given: the declaring evaluator's ``task``, the section's
    ``title`` and ``anchor`` (its id in the page), the evaluator's ``declaration`` and
    ``description``, the run (``store``, ``run_id``, its ``artifacts`` by name) and ``page``: what
    the rest of the page shows (``items``: the item browser's rows)."""

    task: str
    title: str
    anchor: str
    declaration: Declaration
    description: str
    store: RunStore
    run_id: str
    artifacts: Mapping[str, Any]
    page: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def summary(self) -> Summary:
        """The task's typed summary, read from the scores stored with its current judgments."""
        items, causes = [], []
        for j in current_judgments(self.store, self.run_id):
            if j["task"] != self.task:
                continue
            result = j["result"] if isinstance(j["result"], dict) else {}
            scores = []
            for s in result.get("scores") or []:
                try:
                    scores.append(Score.model_validate(s))
                except ValueError:  # a score of another shape: not counted, not fatal
                    continue
            items.append(scores)
            causes.append(None if j["scored"] else str(result.get("cause") or "unscored"))
        return summarize_scores(items, causes)

    @property
    def heading(self) -> Markup:
        """The section's heading: its declared title, escaped."""
        return Markup("<h2>{}</h2>").format(self.title)


Renderer = Callable[[SectionView], "str | None"]


Headline = Callable[[Mapping[str, Any]], "list[dict[str, Any]]"]


class _Kind(NamedTuple):
    renderer: Renderer
    anchor: str | None
    stored_as: tuple[str, str] | None
    entry_point: str | None = None  # where an installed package's renderer came from
    headline: Headline | None = None


class DrawnSection(NamedTuple):
    """A section the page shows: its id, its title in the navigation and its HTML."""

    anchor: str
    title: str
    html: Markup


_KINDS: dict[str, _Kind] = {}


def register_section(kind: str, renderer: Renderer, *, anchor: str | None = None,
                     stored_as: tuple[str, str] | None = None, headline: Headline | None = None) -> None:
    """Draw the sections declared of ``kind`` with ``renderer``. ``anchor``: the section's fixed id
    in the page, drawn once however many evaluators declare it (the package's own keep theirs,
    ``#vrag``); None: ``evaluator-<task>``, one section per declaring evaluator. ``stored_as``:
    ``(artifact, title)``: a run that holds ``artifact`` but declared no section of this kind (a
    run stored before sections were declared) draws it under ``title``. ``headline``: a function of
    the run's artifacts giving the report's summary rows for this kind (``headline.row``), put at
    the top in the order of the sections."""
    _KINDS[kind] = _Kind(renderer, anchor, stored_as, headline=headline)


def registered_anchors() -> tuple[str, ...]:
    """The fixed ids of the registered kinds, in the order they were registered."""
    _load_own()
    return tuple(k.anchor for k in _KINDS.values() if k.anchor)


def _load_own() -> None:
    from . import capabilities  # noqa: F401 - registers the package's own sections through this seam


def _kind(kind: str) -> _Kind | None:
    if kind in _KINDS:
        return _KINDS[kind]
    from ..run.plugins import plugin_entries

    entry = plugin_entries(REPORT_SECTIONS).get(kind)
    if entry is None:
        return None
    try:
        renderer = entry.load()
    except Exception as exc:  # noqa: BLE001 - a user's package that fails to import: say which, in one line
        raise ConfigError(f"report section {kind!r} ({entry.value}) failed to load: "
                          f"{type(exc).__name__}: {exc}") from exc
    if not callable(renderer):
        raise ConfigError(f"report section {kind!r} ({entry.value}) is a {type(renderer).__name__}, "
                          "not a function of the section's view")
    _KINDS[kind] = _Kind(renderer, None, None, entry.value)
    return _KINDS[kind]


def _generic(view: SectionView, *, missing: str | None = None) -> Markup | None:
    summary = view.summary
    if not summary.n:
        return None
    return render_template("sections/scores.html.j2", view=view, summary=summary, missing=missing,
                           causes=", ".join(f"{c} {n}" for c, n in sorted(summary.unscored.items())))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "section"


def _wanted(artifacts: Mapping[str, Any]) -> list[tuple[str, Declaration, str, Section]]:
    """Each declared section with its task, declaration and description, in the order the run
    stored the declarations; then the registered kinds whose artifact the run holds undeclared."""
    wanted = []
    for name, data in artifacts.items():
        if name.startswith(DECLARED_PREFIX) and (declared := read_declaration(data)) is not None:
            task = name[len(DECLARED_PREFIX):]
            wanted += [(task, declared, str(data.get("description") or ""), s) for s in declared.sections]
    kinds = {s.kind for *_, s in wanted}
    for kind, k in _KINDS.items():
        if k.stored_as is not None and kind not in kinds and k.stored_as[0] in artifacts:
            wanted.append((k.stored_as[0], Declaration(), "", Section(k.stored_as[1], kind)))
    return wanted


def headline_rows(artifacts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary rows of each registered kind the run declared (or holds undeclared), once a
    kind, in the order of the sections."""
    _load_own()
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for *_, section in _wanted(artifacts):
        kind = _KINDS.get(section.kind)
        if kind is not None and kind.headline is not None and section.kind not in seen:
            seen.add(section.kind)
            rows += kind.headline(artifacts)
    return rows


def drawn_sections(store: RunStore, run_id: str, artifacts: Mapping[str, Any],
                   page: Mapping[str, Any]) -> list[DrawnSection]:
    """The run's declared sections that have something to show, in the order the run stored them."""
    _load_own()
    out: list[DrawnSection] = []
    seen: set[str] = set()
    for task, declared, description, section in _wanted(artifacts):
        kind = _kind(section.kind) if section.kind != GENERIC else None
        anchor = kind.anchor if kind is not None and kind.anchor else f"evaluator-{_slug(task)}"
        if anchor in seen:
            continue
        view = SectionView(task=task, title=section.title, anchor=anchor, declaration=declared,
                           description=description, store=store, run_id=run_id, artifacts=artifacts, page=page)
        if kind is not None and kind.entry_point is None:
            html = kind.renderer(view)
        elif kind is not None:
            try:
                html = kind.renderer(view)
            except Exception as exc:  # noqa: BLE001 - a user's renderer: one line naming it, not a traceback
                raise ConfigError(f"report section {section.kind!r} ({kind.entry_point}) failed on "
                                  f"{task!r}: {type(exc).__name__}: {exc}") from exc
        else:
            missing = None if section.kind == GENERIC else section.kind
            html = _generic(view, missing=missing)
        if html is None:
            continue
        seen.add(anchor)
        out.append(DrawnSection(anchor, section.title, Markup(html)))
    return out
