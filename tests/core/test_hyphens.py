"""Words hyphenated across a printed line break are read whole; compounds and suspended hyphens stay."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.parsing.hyphens import Hyphens, joined_lines


def _joined(*texts: str, known: str = "") -> list[str]:
    hyphens = Hyphens()
    hyphens.learn([known])
    return [text for _, text, _ in joined_lines([(0, text + "\n", 10.0) for text in texts], hyphens)]


def test_a_word_broken_over_a_line_is_read_whole():
    assert _joined("The mainte-", "nance plan") == ["The maintenance plan\n"]
    assert _joined("Docu-", "ment, replace-", "ment date") == ["Document, replacement date\n"]
    assert _joined("Ver\u00ad", "sicherung") == ["Versicherung\n"]  # a soft hyphen
    assert _joined("OP-", "TIONAL", known="The field is optional.") == ["OPTIONAL\n"]  # capitals, written whole elsewhere
    assert _joined("the intercept-deploy-", "ment flag", known="a deployment") == ["the intercept-deployment flag\n"]
    assert _joined("XftDrawCre-", "ate") == ["XftDrawCreate\n"]


def test_a_compound_s_hyphen_and_a_suspended_one_stay():
    assert _joined("a self-", "test", known="Each self-test is logged.") == ["a self-test\n"]
    assert _joined("the Franco-", "Prussian war") == ["the Franco-Prussian war\n"]
    assert _joined("an end-to-", "end test", known="each end-to-end run") == ["an end-to-end test\n"]
    assert _joined("COVID-", "19 rules") == ["COVID-19 rules\n"]
    assert _joined("pre-", "and post-processing") == ["pre-\n", "and post-processing\n"]
    assert _joined("good -", "but") == ["good -\n", "but\n"]  # a dash, no hyphen


def test_only_lines_of_one_box_and_size_are_joined():
    hyphens = Hyphens()
    lines = [(0, "The mainte-\n", 10.0), (1, "nance plan\n", 10.0), (1, "Heading in-\n", 10.0), (1, "side\n", 14.0)]
    assert joined_lines(lines, hyphens) == lines


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abAB- \u00ad1", min_size=1, max_size=12), min_size=1, max_size=8))
def test_joining_drops_nothing_but_hyphens_and_space_at_a_line_break(texts):
    lines = [(0, text + "\n", 10.0) for text in texts]
    out = joined_lines(lines, Hyphens())

    def bare(texts):
        return re.sub(r"[\s\-\u00ad]", "", "".join(texts))

    assert bare(text for _, text, _ in out) == bare(text for _, text, _ in lines)
    assert len(out) <= len(lines) and all(text.endswith("\n") for _, text, _ in out)


def test_a_pdf_reads_its_hyphenated_words_whole(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "care.pdf", [[("Pump care", 16), "Check the seal before every shift. The mainte-",
                                       "nance schedule lists each valve and its replace-", "ment date; the self-",
                                       "test runs at start-up, as every self-test does."]])
    data = (tmp_path / "care.pdf").read_bytes()
    doc = parse_document(RawDocument("care.pdf", "file:///care.pdf", "h", len(data), "v", data))
    assert doc.text == ("Pump care\n\nCheck the seal before every shift. The maintenance schedule lists each valve "
                        "and its replacement date; the self-test runs at start-up, as every self-test does.")


def test_a_100_kb_line_is_read_in_one_pass():
    """The compound pattern starts at a word's start only: a 100 kB word ending in "1-" was scanned
    again from each of its letters (7 minutes, where it is read in milliseconds)."""
    line = "a" * 100_000 + "1-"
    assert _joined(line, "bcd") == [line + "\n", "bcd\n"]
    assert _joined("x " + "a" * 100_000 + "-", "bcd") == ["x " + "a" * 100_000 + "bcd\n"]
