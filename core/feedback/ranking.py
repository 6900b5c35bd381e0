"""What votes teach retrieval: a factor per cited document, recomputed when votes change."""

from __future__ import annotations

from collections.abc import Callable

from core.config import Settings
from core.feedback.store import FeedbackStore
from core.feedback.votes import decide_adjustments


class FeedbackRanking:
    def __init__(self, store: FeedbackStore, settings: Callable[[], Settings]) -> None:
        self.store = store
        self.settings = settings
        self._cached: tuple[tuple, dict[tuple[str, str], float]] | None = None

    async def factors(self) -> dict[tuple[str, str], float]:
        """(collection, document id) -> the factor its retrieval score is multiplied by."""
        bounds = self.settings().feedback
        # One small read per question: votes may come in through another process.
        key = (await self.store.votes_version(), bounds)
        if self._cached is None or self._cached[0] != key:
            factors = decide_adjustments(
                await self.store.document_votes(),
                up_step=bounds.up_step,
                down_step=bounds.down_step,
                max_up=bounds.max_up,
                max_down=bounds.max_down,
            )
            self._cached = (key, factors)
        return self._cached[1]
