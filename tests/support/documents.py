"""A file's bytes parsed as an ingest parses them (the tests of one format each)."""

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import ParsedDocument, RawDocument
from rag_assets.core.parsing import parse_document


def parsed(doc_id: str, data: bytes) -> ParsedDocument:
    """``data`` parsed as the document ``doc_id`` (its extension names its format)."""
    return parse_document(RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))
