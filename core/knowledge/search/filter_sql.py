"""The search filters as SQL conditions, shared by the keyword search and the catalog's
reads of current chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.knowledge.documents import SearchFilters
from core.storage.database import Dialect


def build_filter_sql(filters: SearchFilters, dialect: Dialect) -> tuple[str, list[Any]]:
    """SQL conditions on chunks `c` and documents `d`. On SQLite, the unary `+` keeps the
    planner from driving the query by the collection index (all chunks of a collection)
    instead of the chunk ids or the full-text match: 5 ms -> 0.3 ms at 10k chunks."""
    clauses: list[str] = []
    params: list[Any] = []

    def among(column: str, values: Sequence[Any]) -> None:
        clauses.append(f"{column} IN ({','.join('?' * len(values))})")
        params.extend(values)

    if filters.collections:
        among("+c.collection" if dialect == "sqlite" else "c.collection", filters.collections)
    if filters.sources:
        among("d.source", filters.sources)
    among("d.room", ("", *filters.rooms))
    for room, since in filters.rooms_since:
        clauses.append(
            "(d.room != ? OR EXISTS (SELECT 1 FROM document_dates dd WHERE dd.collection ="
            " d.collection AND dd.doc_id = d.doc_id AND dd.date_from >= ?))"
        )
        params += (room, since)
    if filters.documents:
        either = " OR ".join("(c.collection = ? AND c.doc_id = ?)" for _ in filters.documents)
        clauses.append(f"({either})")
        params += [part for document in filters.documents for part in document]
    if filters.updated_after is not None:
        clauses.append("d.updated_at >= ?")
        params.append(filters.updated_after)
    if filters.updated_before is not None:
        clauses.append("d.updated_at <= ?")
        params.append(filters.updated_before)
    if filters.dated_between is not None:
        clauses.append(
            "NOT EXISTS (SELECT 1 FROM document_dates dd WHERE dd.collection = d.collection"
            " AND dd.doc_id = d.doc_id AND (dd.date_to <= ? OR dd.date_from >= ?))"
        )
        params += filters.dated_between
    return " AND ".join(clauses), params
