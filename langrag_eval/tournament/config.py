"""A tournament's settings, in a module of their own: ``langrag-eval tournament --help`` makes its
options from them without loading the tournament."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_FACTORS", "TournamentConfig"]

# nDCG's gain, as :data:`langrag_eval.stats.ranking_metrics.Gain` names it (a test keeps the two equal):
# the statistics load numpy, which the help does not need.
Gain = Literal["linear", "exponential"]

DEFAULT_FACTORS = ("how comprehensive, correct, helpful, complete, accurate, deep and detailed each "
                   "answer is. An answer counts as comprehensive when it gives the user several "
                   "angles that all still serve what the question is after.")


class TournamentConfig(BaseModel):
    """Every setting of a tournament (part of the run id, so changing one starts a new run).

    Each field's description says what it sets; ``langrag-eval tournament`` offers every field as
    an option (``n_games_per_query`` as ``--games-per-query``, ``n_boot`` as ``--bootstrap``).
    """

    # the validator is built on first use, not at import: `langrag-eval tournament --help` reads the
    # fields only (a third of the cost of loading the class)
    model_config = ConfigDict(frozen=True, defer_build=True)

    schedule: Literal["all", "sample", "adaptive"] = Field(
        "all", description="which games to play: all pairs on every query, a seeded sample of them per "
                           "query, or adaptive (more games where the ranking is still uncertain)")
    n_games_per_query: int = Field(15, ge=1, description="games per query when the schedule is sample")
    threshold: int = Field(default=2, ge=0, le=2,
                           description="least relevance a document needs to be shown to the pairwise judge")
    factors: str = Field(DEFAULT_FACTORS, min_length=1,
                         description="what the pairwise judge should weigh, in words (default: "
                                     "comprehensiveness, correctness, helpfulness and the like)")
    orders: Literal[1, 2] = Field(
        2, description="judge each game in both orders, a disagreement a tie (2), or once with the answer "
                       "shown first chosen by a seeded coin (1, as the RAGElo paper's Table 5)")
    pointwise: bool = Field(False, description="also score each answer on relevance, accuracy, completeness "
                                               "and precision (0-2)")
    k: int = Field(default=5, ge=1, description="cut-off of MRR@k and nDCG@k")
    ndcg_gain: Gain = Field("exponential", description="nDCG gain: 2**rel - 1 (exponential) or rel "
                                                       "(linear, trec_eval's)")
    tournaments: int = Field(default=500, ge=1, description="Elo tournaments to average, each over the games "
                                                            "in a new random order")
    elo_k: float = Field(32.0, description="Elo K-factor: how far one game moves a rating")
    initial: float = Field(1000.0, description="the rating every agent starts from")
    n_boot: int = Field(default=200, ge=0, description="bootstrap resamples for the rating intervals")
    level: float = Field(0.95, gt=0, lt=1, description="confidence level of the intervals")
    seed: int = Field(0, description="seed of the sampled schedule, the coin of one-order games, the "
                                     "tournaments and the bootstrap")
    adaptive_initial: int = Field(10, ge=1, description="games per pair before the adaptive schedule first "
                                                        "fits the ranking")
    adaptive_batch: int = Field(10, ge=1, description="games per unsettled pair in each adaptive round")
    adaptive_z: float = Field(1.645, gt=0, description="standard errors by which neighbours in the ranking "
                                                       "must differ to count as settled (adaptive schedule)")
    max_games: int | None = Field(None, ge=1, description="stop after this many games")
    relevance_prompt: str = Field("tournament/relevance", description="template of the relevance judge "
                                                                      "(a shipped name or a file path)")
    pointwise_prompt: str = Field("tournament/pointwise", description="template of the pointwise judge "
                                                                      "(a shipped name or a file path)")
    pairwise_prompt: str = Field("tournament/pairwise", description="template of the pairwise judge "
                                                                    "(a shipped name or a file path)")
