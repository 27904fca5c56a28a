"""Vector retrieval over a corpus' LanceDB table, returning citable hits."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rag_assets.core.index import LanceIndex

CITATION_COLUMNS = ["id", "doc_id", "text", "start", "end", "chunk_index", "title", "source_uri",
                    "heading_path", "page", "content_hash", "embedding_model", "chunk_profile", "run_id", "_distance"]


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk with everything a citation needs."""

    id: str
    doc_id: str
    text: str
    source: str
    title: str
    heading_path: str
    page: int | None
    start: int
    end: int
    chunk_index: int
    score: float
    mode: str = "vector"

    def to_dict(self) -> dict:
        return asdict(self)

    def citation(self) -> str:
        parts = [self.title or self.doc_id]
        if self.heading_path:
            parts.append(self.heading_path)
        if self.page is not None:
            parts.append(f"p. {self.page}")
        parts.append(f"chars {self.start}-{self.end}")
        return " | ".join(parts) + f"  ({self.source})"


def vector_search(index: LanceIndex, vector: list[float], k: int = 5, version: int | None = None) -> list[Hit]:
    """Top ``k`` chunks by cosine similarity (score = 1 - cosine distance), at table ``version``
    (LanceDB time travel) when given."""
    table = index.table()
    if version is not None:
        table.checkout(version)
    rows = (
        table
        .search(vector, vector_column_name="vector")
        .distance_type("cosine")
        .select(CITATION_COLUMNS)
        .limit(k)
        .to_list()
    )
    return [
        Hit(
            id=r["id"], doc_id=r["doc_id"], text=r["text"], source=r["source_uri"], title=r["title"],
            heading_path=r["heading_path"] or "", page=r["page"], start=r["start"], end=r["end"],
            chunk_index=r["chunk_index"], score=round(1.0 - float(r["_distance"]), 6),
        )
        for r in rows
    ]
