"""Turn raw document bytes into a ParsedDocument whose element spans index its text exactly."""

from rag_assets.core.parsing.formats import CONTENT_TYPE_NAMES, content_type_for
from rag_assets.core.parsing.limits import ParseLimitExceeded, ParseLimits
from rag_assets.core.parsing.parse import DocumentError, parse_document, parser_settings, parser_version

__all__ = ["CONTENT_TYPE_NAMES", "DocumentError", "ParseLimitExceeded", "ParseLimits", "content_type_for", "parse_document",
           "parser_settings", "parser_version"]
