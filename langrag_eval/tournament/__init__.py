"""RAGElo tournaments."""
