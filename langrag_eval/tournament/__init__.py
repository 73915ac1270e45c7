"""RAGElo tournaments (Rackauckas, Camara and Zavrel, 2024): rank RAG variants without golden answers.

An LLM judge rates every retrieved document 0-2 for its query (the judgments form qrels for MRR@k
and nDCG@k), optionally scores each answer pointwise on four criteria, and plays the agents' answers
against each other in pairs with the relevant documents and their assessments in the prompt. Every
game is judged in both orders; a verdict that flips with the order is a tie. Elo (averaged over
shuffled tournaments) and Bradley-Terry (with bootstrap intervals) turn the games into a ranking.

The summary stored as the run's ``tournament`` artifact is documented in
:mod:`langrag_eval.tournament.summary`.

>>> from langrag_eval.runtime import Judge
>>> from langrag_eval.testing import ScriptedModel
>>> from langrag_eval.tournament import TournamentConfig, TournamentData, run_tournament
>>> data = TournamentData.from_records([
...     {"qid": "q1", "query": "Capital of France?", "agent": "good", "answer": "Paris.",
...      "documents": [{"id": "d1", "text": "Paris is the capital of France."}]},
...     {"qid": "q1", "query": "Capital of France?", "agent": "bad", "answer": "Lyon.",
...      "documents": [{"id": "d1", "text": "Paris is the capital of France."}]}])
>>> def reply(prompt):
...     if "<document>" in prompt:
...         return '{"reason": "It names the capital.", "relevance": 2}'
...     first = prompt.split("<answer_a>")[1]
...     return "[[A]]" if first.strip().startswith("Paris") else "[[B]]"
>>> result = run_tournament(data, Judge(ScriptedModel(reply)), TournamentConfig(tournaments=20, n_boot=20))
>>> [row["agent"] for row in result.summary["ranking"]], result.summary["retrieval"]["per_agent"]["good"]["mrr"]
(['good', 'bad'], {'somewhat': 1.0, 'very': 1.0})
"""

from typing import TYPE_CHECKING

from .. import lazy_getattr

if TYPE_CHECKING:
    from .apps import (
        App, acollect_answers, as_queries, atournament_over_apps, collect_answers, tournament_over_apps,
    )
    from .data import AgentAnswer, Problem, TournamentData, load_answers_jsonl, load_ragelo_csv
    from .evaluators import (
        CRITERIA, DEFAULT_FACTORS, PointwiseEvaluator, PointwiseSample, PointwiseScores, RelevanceEvaluator,
        RelevanceJudgment, RelevanceSample,
    )
    from .pairwise import (
        GameOutcome, GameRecord, GameSample, PairwiseEvaluator, combine_orders, reference_documents,
    )
    from .qrels import build_qrels, retrieval_metrics
    from .ranking import (
        BTFit, BTIntervals, EloResult, bradley_terry, bradley_terry_intervals, elo_ratings, elo_table,
        elo_update, expected_score, win_matrix,
    )
    from .run import TournamentConfig, TournamentResult, arun_tournament, run_tournament
    from .schedule import AdaptiveScheduler, Matchup, available_games, sample_games
    from .summary import format_summary, summarize

# Names load on first use: the command line's help reads a settings class without the capability.
_LAZY = {
    'App': '.apps',
    'acollect_answers': '.apps',
    'as_queries': '.apps',
    'atournament_over_apps': '.apps',
    'collect_answers': '.apps',
    'tournament_over_apps': '.apps',
    'AgentAnswer': '.data',
    'Problem': '.data',
    'TournamentData': '.data',
    'load_answers_jsonl': '.data',
    'load_ragelo_csv': '.data',
    'CRITERIA': '.evaluators',
    'DEFAULT_FACTORS': '.evaluators',
    'PointwiseEvaluator': '.evaluators',
    'PointwiseSample': '.evaluators',
    'PointwiseScores': '.evaluators',
    'RelevanceEvaluator': '.evaluators',
    'RelevanceJudgment': '.evaluators',
    'RelevanceSample': '.evaluators',
    'GameOutcome': '.pairwise',
    'GameRecord': '.pairwise',
    'GameSample': '.pairwise',
    'PairwiseEvaluator': '.pairwise',
    'combine_orders': '.pairwise',
    'reference_documents': '.pairwise',
    'build_qrels': '.qrels',
    'retrieval_metrics': '.qrels',
    'BTFit': '.ranking',
    'BTIntervals': '.ranking',
    'EloResult': '.ranking',
    'bradley_terry': '.ranking',
    'bradley_terry_intervals': '.ranking',
    'elo_ratings': '.ranking',
    'elo_table': '.ranking',
    'elo_update': '.ranking',
    'expected_score': '.ranking',
    'win_matrix': '.ranking',
    'TournamentConfig': '.config',
    'TournamentResult': '.run',
    'arun_tournament': '.run',
    'run_tournament': '.run',
    'AdaptiveScheduler': '.schedule',
    'Matchup': '.schedule',
    'available_games': '.schedule',
    'sample_games': '.schedule',
    'format_summary': '.summary',
    'summarize': '.summary',
}

__getattr__ = lazy_getattr(__name__, _LAZY, globals())

__all__ = [
                         "CRITERIA",
                         "DEFAULT_FACTORS",
                         "AdaptiveScheduler",
                         "AgentAnswer",
                         "App",
                         "BTFit",
                         "BTIntervals",
                         "EloResult",
                         "GameOutcome",
                         "GameRecord",
                         "GameSample",
                         "Matchup",
                         "PairwiseEvaluator",
                         "PointwiseEvaluator",
                         "PointwiseSample",
                         "PointwiseScores",
                         "Problem",
                         "RelevanceEvaluator",
                         "RelevanceJudgment",
                         "RelevanceSample",
                         "TournamentConfig",
                         "TournamentData",
                         "TournamentResult",
                         "arun_tournament",
                         "as_queries",
                         "available_games",
                         "bradley_terry",
                         "bradley_terry_intervals",
                         "build_qrels",
                         "acollect_answers",
                         "atournament_over_apps",
                         "collect_answers",
                         "combine_orders",
                         "elo_ratings",
                         "elo_table",
                         "elo_update",
                         "expected_score",
                         "format_summary",
                         "load_answers_jsonl",
                         "load_ragelo_csv",
                         "reference_documents",
                         "retrieval_metrics",
                         "run_tournament",
                         "summarize",
                         "sample_games",
                         "tournament_over_apps",
                         "win_matrix",
]
