"""Fixtures for tournament tests."""

from __future__ import annotations

import pytest
from tournament_helpers import records

from langrag_eval.tournament import TournamentData


@pytest.fixture
def three_agents() -> TournamentData:
    return TournamentData.from_records(records({"strong": 3, "middle": 2, "weak": 1}))
