"""Invariants of every chunking strategy (hypothesis) and the behaviour each one promises."""

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.core.chunking import ChunkingProfile, chunk_document, row_token_limit
from rag_assets.core.chunking.document import MAX_CHARS_PER_TOKEN
from rag_assets.core.chunking.sentences import sentence_spans
from rag_assets.core.chunking import STRATEGIES
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.parsing.structure import markdown_elements
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

SAMPLE = Path(__file__).resolve().parents[2] / "sample_docs"
COUNTERS = {name: get_token_counter(name) for name in ("cl100k_base", MINILM_TOKENIZER)}


def fake_embed(texts):
    """Deterministic bag-of-words vectors: enough signal for breakpoints, no model needed."""
    out = []
    for text in texts:
        v = np.zeros(64)
        for word in text.lower().split():
            v[hash(word) % 64] += 1.0
        out.append(v.tolist())
    return out


def make(name, max_tokens, overlap, counter):
    kwargs = {"embed": fake_embed} if name == "semantic" else {}
    return STRATEGIES[name](max_tokens, overlap, counter, **kwargs)


lines = st.sampled_from(
    ["# Guide", "## Refunds", "### Enterprise", "Q: How do refunds work?", "A: Within 45 days of delivery.",
     "Maya: Let's start with the mapping service.", "Jonas: It is eighty percent done.",
     "| sku | name | price |", "|---|---|---|", "| NW-1 | Brush | 24.90 |", "sku,name,price", "NW-2,Filter,19.50",
     "def reserve(sku, units):", "    return client.reserve(sku, units)", "class Client:", "    timeout = 5",
     "The U.S. team paid $3.50 for v4.8.1. Was it worth it? Yes.", "日本語の文章です。次の文です。",
     "A line with an emoji 🎉 and zero\u200bwidth chars.", "", "x" * 300, "- a list item", "1. first step",
     "Q: Why " + "does this question go on and on " * 12 + "?", "```yaml", "```", "    "]
)
documents = st.lists(lines, max_size=60).map("\n".join)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("tokenizer", sorted(COUNTERS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, max_tokens=st.integers(16, 96), overlap=st.sampled_from([0, 4]))
def test_every_strategy_keeps_spans_exact_covered_within_limit_and_deterministic(name, tokenizer, text, max_tokens, overlap):
    counter = COUNTERS[tokenizer]
    chunker = make(name, max_tokens, overlap, counter)
    elements = markdown_elements(text)  # code blocks among them: strategies may cut by them
    spans = chunker.chunk(text, elements)
    covered = bytearray(len(text))
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        piece = text[span.start : span.end]
        assert piece.strip()
        assert span.tokens == counter.count(piece) <= max_tokens
        if span.context:
            assert counter.count(span.context + piece) <= max_tokens + counter.special_tokens + 2
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    assert make(name, max_tokens, overlap, counter).chunk(text, elements) == spans


@pytest.mark.parametrize("strategy", sorted(STRATEGIES) + ["auto"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents)
def test_chunk_document_embed_text_fits_the_model_limit(strategy, text):
    counter = COUNTERS[MINILM_TOKENIZER]
    doc = parse_document(RawDocument("doc.md", "file:///doc.md", content_hash(text.encode()), 1, "v", text.encode())) \
        if text.strip() else None
    if doc is None:
        return
    profile = ChunkingProfile("p", strategy=strategy, max_tokens=400, overlap=8)
    chunked = chunk_document(doc, profile, counter, model_limit=96, embed=fake_embed)
    covered = bytearray(len(doc.text))
    for chunk in chunked.chunks:
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert counter.count(chunk.embed_text) == chunk.tokens <= 96
        # MiniLM reads each 300-char word as one token: chunks stay a size a prompt can hold
        assert len(chunk.text) <= MAX_CHARS_PER_TOKEN * 96
        covered[chunk.start : chunk.end] = b"\x01" * (chunk.end - chunk.start)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(doc.text))


@pytest.mark.parametrize("strategy", sorted(STRATEGIES) + ["auto"])
@pytest.mark.parametrize("text", ["Intro.\n\n" + "x" * 100_000 + "\n\nClosing words.", ("y" * 300 + " ") * 200])
def test_words_the_tokenizer_reads_as_one_token_still_make_chunks_a_prompt_can_hold(strategy, text):
    counter = COUNTERS[MINILM_TOKENIZER]
    doc = parse_document(RawDocument("doc.txt", "file:///doc.txt", content_hash(text.encode()), 1, "v", text.encode()))
    chunked = chunk_document(doc, ChunkingProfile("p", strategy=strategy, max_tokens=128), counter, 256,
                             embed=fake_embed)
    covered = bytearray(len(text))
    for chunk in chunked.chunks:
        assert text[chunk.start : chunk.end] == chunk.text and counter.count(chunk.embed_text) == chunk.tokens <= 128
        assert len(chunk.text) <= MAX_CHARS_PER_TOKEN * 128
        covered[chunk.start : chunk.end] = b"\x01" * (chunk.end - chunk.start)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    assert chunked.chunks[-1].text.endswith(text.rstrip()[-5:])
    assert all(c.window_end - c.window_start <= MAX_CHARS_PER_TOKEN * 128 for c in chunked.chunks if c.window_start is not None)


def test_a_long_cjk_title_is_shortened_to_leave_room_for_text_and_a_short_title_is_kept_whole():
    counter = COUNTERS[MINILM_TOKENIZER]
    profile = ChunkingProfile("p", strategy="recursive", max_tokens=128)
    for title, kept in (("数据管道配置与文档检索系统的设计原则" * 4, "数据管道配置与文档检索系统的设计原则" * 2),
                        ("Refund policy", "Refund policy")):
        text = f"# {title}\n\n" + "这是正文。" * 60
        doc = parse_document(RawDocument("doc.md", "file:///doc.md", content_hash(text.encode()), 1, "v", text.encode()))
        chunked = chunk_document(doc, profile, counter, model_limit=256)
        for chunk in chunked.chunks:
            assert counter.count(chunk.embed_text) == chunk.tokens <= 128
            header_title = chunk.embed_text.split("\n", 1)[0].removeprefix("Document: ")
            assert title.startswith(header_title) and header_title.startswith(kept)
        assert (header_title == title) == (title == kept)


def test_sentence_splitter_knows_abbreviations_decimals_quotes_and_lists():
    text = ('Dr. Smith paid $3.50 for v4.8.1 of the app. Was it worth it? "Yes!" she said. '
            'The U.S. team agreed, e.g. on price... and left.\n- first item\n- second item\n日本語の文です。次の文です。')
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    assert sentences[:4] == [
        "Dr. Smith paid $3.50 for v4.8.1 of the app.",
        "Was it worth it?",
        '"Yes!" she said.',
        "The U.S. team agreed, e.g. on price... and left.",
    ]
    assert "- first item" in sentences and "- second item" in sentences


@pytest.mark.parametrize("text, sentences", [
    ("- Buy milk before noon.\n- Call the plumber.", ["- Buy milk before noon.", "- Call the plumber."]),
    ("1. Import the module\n2. Create a widget", ["1. Import the module", "2. Create a widget"]),
    ("Steps:\n\n 10. Open it. Then close it.\n11. Done", ["Steps:", "10. Open it.", "Then close it.", "11. Done"]),
    (".. _rollback:\n\nRoll back. Now.", [".. _rollback:", "Roll back.", "Now."]),
])
def test_a_list_marker_or_a_mark_opening_its_line_stays_with_its_text(text, sentences):
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


def test_sentence_splitter_takes_each_markdown_table_row_as_one_sentence():
    text = ("The limits follow. They are per Region.\n\n| Resource | Default | Notes |\n| --- | :-: | --- |\n"
            "| Filters | 100 | The maximum per account\\. Ask to raise it. |\n|  Load balancers | 50 | |\n"
            "Most limits can be raised. See Quotas.")
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    assert sentences == [
        "The limits follow.", "They are per Region.",
        "| Resource | Default | Notes |\n| --- | :-: | --- |",  # the delimiter row stays with its header
        "| Filters | 100 | The maximum per account\\. Ask to raise it. |",  # end marks inside a row do not cut it
        "|  Load balancers | 50 | |",
        "Most limits can be raised.", "See Quotas.",
    ]


@pytest.mark.parametrize("marks", [".", "?", "\u2026", "\u3002"])
def test_a_long_run_of_end_marks_is_read_once(marks):
    """A run of end marks with no space after it was tried as a sentence end from each of its marks
    (100,000 dots: minutes); it is one try from its first mark, and the text still splits where it did."""
    text = "First one. " + marks * 100_000 + "x and more. Last one."
    spans = [text[a:b] for a, b in sentence_spans(text)]
    assert spans[0] == "First one." and spans[-1] == "Last one." and "".join(spans).replace(" ", "") == text.replace(" ", "")


sections = st.lists(st.tuples(st.sampled_from(["#", "##", "###"]), st.sampled_from(["Refunds", "Setup", "Travel"]),
                               st.integers(0, 40)), min_size=1, max_size=12)


@pytest.mark.parametrize("strategy", ["markdown", "auto"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outline=sections, min_tokens=st.sampled_from([0, 30, 120]))
def test_a_chunk_s_heading_path_holds_every_element_it_covers(strategy, outline, min_tokens):
    """A chunk's section lies on the heading path of everything it covers: its text is in that
    section, or in one above it (a heading or opening text joining its first subsection), never in
    a sibling's or the next section's; its ``sections`` list that path first (siblings joined under no
    common heading have none), then every other section it covers."""
    text = "\n\n".join(f"{marks} {title} {n}\n\n" + "Each rule applies to every order. " * words
                       for n, (marks, title, words) in enumerate(outline))
    doc = parse_document(RawDocument("doc.md", "file:///doc.md", content_hash(text.encode()), 1, "v", text.encode()))
    profile = ChunkingProfile("p", strategy=strategy, max_tokens=200, overlap=0, min_tokens=min_tokens)
    for chunk in chunk_document(doc, profile, COUNTERS[MINILM_TOKENIZER], model_limit=256).chunks:
        for element in doc.elements:
            if element.start < chunk.end and chunk.start < element.end:
                under = element.heading_path[:len(chunk.heading_path)] == chunk.heading_path
                above = chunk.heading_path[:len(element.heading_path)] == element.heading_path
                assert under or above, (chunk, element)
                # every section it spans is recorded (what `--filter section=` and `section:` match)
                assert not element.heading_path or " > ".join(element.heading_path) in chunk.sections
        assert not chunk.heading_path or chunk.sections[0] == " > ".join(chunk.heading_path)


def test_markdown_keeps_heading_paths_and_ignores_hashes_in_code():
    text = (SAMPLE / "handbook" / "employee_handbook.md").read_text() + "\n```sh\n# not a heading\necho hi\n```\n"
    spans = STRATEGIES["markdown"](80, 0, COUNTERS[MINILM_TOKENIZER]).chunk(text)
    vacation = next(s for s in spans if "27 days" in text[s.start : s.end])
    assert vacation.heading_path[-2:] == ("Time Off", "Vacation")
    assert all("not a heading" not in "".join(s.heading_path) for s in spans)
    # Sections never share a chunk across top-level branches.
    for s in spans:
        chunk = text[s.start : s.end]
        assert not ("27 days" in chunk and "750 EUR" in chunk)


def test_big_table_splits_by_rows_with_the_header_repeated():
    header = "| sku | name | price |\n|---|---|---|\n"
    rows = "".join(f"| NW-{i:05d} | Part number {i} | {i}.50 |\n" for i in range(10_000))
    text = "# Parts\n\n" + header + rows
    counter = COUNTERS["cl100k_base"]
    spans = STRATEGIES["markdown"](200, 0, counter).chunk(text)
    table_spans = [s for s in spans if s.context]
    assert len(table_spans) > 100
    for s in table_spans:
        assert s.context == header
        assert counter.count(s.context + text[s.start : s.end]) <= 200
        assert text[s.start : s.end].startswith("| NW-")  # whole rows only
    records = STRATEGIES["table"](200, 0, counter, records=True).chunk("sku,name\nNW-1,Brush\nNW-2,Filter\n")
    assert records[0].embed_override.splitlines()[0] == "sku: NW-1; name: Brush"


def test_a_table_without_outer_pipes_is_chunked_by_rows_like_one_with_them():
    """GFM tables need no outer pipes ("sku | name" over "--- | ---"): such a table was read as a
    comma-delimited one (its delimiter row a data row) and cut into sentences across its rows."""
    rows = "".join(f"NW-{i:05d} | Part number {i}. Spare | {i}.50\n" for i in range(300))
    text = "# Parts\n\nsku | name | price\n--- | --- | ---:\n" + rows
    doc = parse_document(RawDocument("parts.md", "file:///parts.md", content_hash(text.encode()), 1, "v", text.encode()))
    counter = COUNTERS["cl100k_base"]
    spans = STRATEGIES["markdown"](200, 0, counter).chunk(doc.text, doc.elements)
    assert doc.text[spans[1].start : spans[1].end].startswith("sku | name | price\n--- | --- | ---:\nNW-00000 |")
    assert len(spans) > 10 and all(s.context == "sku | name | price\n--- | --- | ---:\n" for s in spans[2:])
    assert all(doc.text[s.start : s.end].startswith("NW-") for s in spans[2:])  # whole rows only
    records = STRATEGIES["table"](200, 0, counter, records=True).chunk(doc.text, doc.elements)
    assert records[1].embed_override.splitlines()[0] == "sku: NW-00000; name: Part number 0. Spare; price: 0.50"
    for strategy in ("sentence", "sentence_window"):
        units = STRATEGIES[strategy](24, 0, counter).chunk(doc.text, doc.elements)
        texts = [doc.text[s.start : s.end] for s in units]
        assert any(t.endswith("sku | name | price\n--- | --- | ---:") for t in texts)  # the header with its delimiter row
        assert all(t.count("NW-") == t.count("\n") + 1 for t in texts if "NW-" in t)  # whole rows, "Part number 7." in one


@pytest.mark.parametrize("columns", [6, 12, 20])
def test_a_records_chunk_embeds_the_rows_it_cites(columns):
    """Rows were grouped by their records' tokens alone: a sparse row's record ("c0: r5; c11: v5")
    is shorter than its cited line of empty cells, so a group's text outgrew the limit, was cut,
    and every piece embedded the whole group's records (64 of 66 chunks at 12 columns)."""
    table = "| " + " | ".join(f"c{j}" for j in range(columns)) + " |\n|" + " --- |" * columns + "\n" + "".join(
        f"| r{i} |" + " |" * (columns - 2) + f" v{i} |\n" for i in range(300))
    counter = get_token_counter(MINILM_TOKENIZER)
    spans = STRATEGIES["table"](256, 0, counter, records=True).chunk(table)
    assert len(spans) > 10
    for span in spans:
        cited = re.findall(r"\| (r\d+) \|", table[span.start : span.end])
        assert cited and re.findall(r"c0: (r\d+)", span.embed_override) == cited


def test_a_markdown_table_without_a_delimiter_row_has_no_header_to_repeat():
    """GFM reads pipe lines with no delimiter row under the first as no header; the first line was
    the context of every group of lines after it."""
    text = "".join(f"| param{i}: | the value of parameter {i} |\n" for i in range(300))
    counter = get_token_counter(MINILM_TOKENIZER)
    for strategy in ("table", "markdown"):
        spans = STRATEGIES[strategy](128, 0, counter).chunk(text, markdown_elements(text))
        assert len(spans) > 10 and all(not span.context for span in spans), strategy
        assert "".join(text[span.start : span.end] + "\n" for span in spans) == text  # whole rows, each once
    headed = "| Name | Meaning |\n| --- | --- |\n" + text
    spans = STRATEGIES["table"](128, 0, counter).chunk(headed)
    assert all(span.context == "| Name | Meaning |\n| --- | --- |\n" for span in spans[1:])


cells = st.text(alphabet="abcdefgh 0123456789.-", min_size=1, max_size=60).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=st.integers(2, 40), rows=st.lists(st.lists(cells, min_size=1, max_size=40), min_size=1, max_size=8),
       markdown=st.booleans(), max_tokens=st.sampled_from([48, 96, 200]))
def test_a_row_too_long_for_its_header_is_cut_alone_and_its_pieces_name_their_own_columns(
        columns, rows, markdown, max_tokens):
    """A row that does not fit under the header was split and packed with the next row (a chunk
    mixing two orders), or cut into fragments each under the whole header (cells read against the
    wrong columns). Now a chunk holds whole rows, or lies within one row and embeds its cells as
    `column: value`, each value that column's cell (the first cell may name the row)."""
    names = [f"column_{i}" for i in range(columns)]
    body = [[cell for cell in row[:columns]] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(names) + " |", "|" + "---|" * columns] + ["| " + " | ".join(r) + " |" for r in body]
    else:
        lines = [",".join(names)] + [",".join(r) for r in body]
    text = "\n".join(lines) + "\n"
    counter = COUNTERS["cl100k_base"]
    spans = STRATEGIES["table"](max_tokens, 0, counter).chunk(text)
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    first_row = 2 if markdown else 1
    extents = [(starts[i], starts[i] + len(lines[i]), body[i - first_row]) for i in range(first_row, len(lines))]
    covered = bytearray(len(text))
    for span in spans:
        assert counter.count(span.context + text[span.start:span.end]) <= max_tokens + counter.special_tokens
        covered[span.start:span.end] = b"\x01" * (span.end - span.start)
        touched = [(a, b, row) for a, b, row in extents if span.start < b and a < span.end]
        if len(touched) > 1 or not touched:
            assert all(span.start <= a and b <= span.end for a, b, _ in touched)  # whole rows
            continue
        (a, b, row), = touched
        if span.start <= a and b <= span.end:
            continue  # the whole row
        assert a <= span.start and span.end <= b  # a piece of one row: nothing of another
        if span.embed_override is not None:
            for pair in span.embed_override.split("; "):
                name, _, value = pair.partition(": ")
                column = int(name.removeprefix("column_"))
                assert value == row[column] or row[column].startswith(value) or value in row[column], (pair, row)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.lists(cells, min_size=1, max_size=12), min_size=1, max_size=30), records=st.booleans(),
       max_tokens=st.sampled_from([48, 96, 200]))
def test_a_table_without_a_header_is_chunked_by_whole_rows_within_the_limit(rows, records, max_tokens):
    """Pipe rows with no delimiter row: no span repeats a row as context, every span fits the limit,
    together they cover the table, and a group of whole rows embeds (``records``) just its rows."""
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(lines) + "\n"
    counter = COUNTERS["cl100k_base"]
    spans = STRATEGIES["table"](max_tokens, 0, counter, records=records).chunk(text)
    covered = bytearray(len(text))
    for span in spans:
        assert not span.context
        assert counter.count(text[span.start : span.end]) <= max_tokens + counter.special_tokens
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
        whole = text[span.start : span.end].split("\n")
        if records and span.embed_override is not None and all(line in lines for line in whole):
            cited = [rows[lines.index(line)] for line in whole]
            assert re.sub(r"[;\s]", "", span.embed_override) == re.sub(r"\s", "", "".join(map("".join, cited)))
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))


def test_every_cell_of_a_wide_markdown_table_and_the_text_after_it_is_embedded():
    """min_tokens merged a row's `column: value` piece with the next row's piece or the next section,
    and the merged chunk embedded only the first piece: cells and a closing paragraph never reached
    the index."""
    import re

    columns = ["order_id"] + [f"col_{i}" for i in range(1, 25)]
    rows = ["| " + " | ".join([f"ORD-{1000 + r}"] + ["word " * 60 if i % 6 == 0 else f"v{r}_{i}" for i in range(1, 25)])
            + " |" for r in range(8)]
    text = ("# Orders\n\n## Table\n\n| " + " | ".join(columns) + " |\n|" + "---|" * 25 + "\n" + "\n".join(rows)
            + "\n\n## After\n\nClosing paragraph.\n")
    doc = parse_document(RawDocument("orders.md", "", content_hash(text.encode()), len(text), "", text.encode()))
    for profile in (ChunkingProfile("default", strategy="auto", max_tokens=200, overlap=32, min_tokens=50),
                    ChunkingProfile("markdown", strategy="markdown", max_tokens=200, min_tokens=50)):
        chunks = chunk_document(doc, profile, COUNTERS[MINILM_TOKENIZER], 256).chunks
        for chunk in chunks:
            missing = [v for v in re.findall(r"v\d_\d+|Closing paragraph", chunk.text) if v not in chunk.embed_text]
            assert not missing, (profile.name, chunk.chunk_index, missing)


def _embedded(name: str, data: str, profile: ChunkingProfile) -> list[str]:
    doc = parse_document(RawDocument(name, "", content_hash(data.encode()), len(data), "", data.encode()))
    chunks = chunk_document(doc, profile, COUNTERS[MINILM_TOKENIZER], 256).chunks
    assert all(doc.text[c.start:c.end] == c.text and c.tokens <= 256 for c in chunks)
    return [c.embed_text.split("\n\n", 1)[-1] for c in chunks]  # after the contextual header


def test_long_table_rows_are_read_as_a_reader_reads_them():
    """Found by the table audit: each failed before."""
    long = "late delivery again " * 80
    default = ChunkingProfile("default", strategy="auto", max_tokens=256, overlap=32, min_tokens=50)
    # A quoted CSV cell with a line break is one cell of one row (its pieces were labelled `id`).
    embedded = _embedded("m1.csv", f'id,address,comment\nO-1,"12 Road\nSpringfield",{long}\n', default)
    assert "id: O-1; address: 12 Road\nSpringfield" in embedded and any(e.startswith("id: O-1; comment: late") for e in embedded)
    # A TSV file is split at tabs (a comma in a value stays in it).
    embedded = _embedded("m2.tsv", f"id\tcustomer\tnote\nT-1\tSmith, John\t{long}\n", default)
    assert "id: T-1; customer: Smith, John" in embedded and any(e.startswith("id: T-1; note: late") for e in embedded)
    # An escaped pipe in the header is part of a column name, not a separator.
    embedded = _embedded("p.md", "| key | a \\| b | c |\n|---|---|---|\n| K1 | AB | " + long + "|\n", default)
    assert "key: K1; a \\| b: AB" in embedded and any(e.startswith("key: K1; c: late") for e in embedded)
    # The pieces of a quoted cell cut apart embed its text, not its quotes and the separators.
    quoted = 'He said ""hello, world"" and ' + long
    embedded = _embedded("q.csv", f'id,desc,price\nA1,"{quoted}",9.99\n', default)
    desc = [e for e in embedded if e.startswith("id: A1; desc:")]
    assert desc[0].startswith('id: A1; desc: He said "hello, world" and late') and not any(
        e.rstrip().endswith(('",', '"')) for e in desc)
    # A header alone is text, not a row of data labelled with itself.
    header = "| " + " | ".join(f"column {i} name words" for i in range(120)) + " |\n|" + "---|" * 120 + "\n"
    assert not any(": ---" in e or "words: column" in e for e in _embedded("h.md", header, default))
    # A profile sized in another tokenizer: a piece whose column: value text is over the model's limit
    # embeds its own text (it failed the document: AssertionError).
    sized = ChunkingProfile("md", strategy="markdown", max_tokens=256, min_tokens=50, contextual_header=False,
                            size_tokenizer="cl100k_base")
    wide = ("| " + " | ".join(f"HTTPResponseCode{i}" for i in range(80)) + " |\n|" + "---|" * 80 + "\n| "
            + " | ".join("200" for _ in range(80)) + " |\n")
    assert _embedded("w.md", wide, sized)


def test_a_web_page_table_is_chunked_by_rows_with_its_header_as_context():
    rows = "".join(f"<tr><td>NW-{i:04d}</td><td>Part {i}</td><td>{i * 3} EUR</td></tr>" for i in range(400))
    page = (f"<html><body><h1>Spare parts</h1><p>Prices as of March.</p><table><tr><th>Part</th><th>Name</th>"
            f"<th>Price</th></tr>{rows}</table></body></html>").encode()
    doc = parse_document(RawDocument("parts.html", "", content_hash(page), len(page), "", page))
    chunked = chunk_document(doc, ChunkingProfile("default", strategy="auto", max_tokens=128, overlap=16),
                             COUNTERS[MINILM_TOKENIZER], 256)
    assert {c.strategy for c in chunked.chunks} == {"markdown"}  # one heading, but a table: by section, its rows
    later = chunked.chunks[1:]
    assert len(later) > 20
    for chunk in later:
        assert chunk.text.startswith("| NW-") and chunk.text.endswith(" EUR |")  # whole rows only
        assert "| Part | Name | Price |" in chunk.embed_text  # the header row, as context


def test_an_email_is_never_taken_for_a_transcript():
    from rag_assets.core.chunking.auto import choose_strategy
    from tests.support.bad_inputs import email_message

    mail = (b"From: Dana Lee <dana@northwind.example>\nTo: support@northwind.example\nCc: jw@northwind.example\n"
            b"Subject: Dock firmware 2.4\nDate: Tue, 03 Nov 2026 10:12:00 +0000\n\nHi team,\n\nAfter updating to "
            b"dock firmware 2.4 the R4 dock no longer charges.\n")
    doc = parse_document(RawDocument("dock.eml", "", content_hash(mail), len(mail), "", mail))
    as_text = parse_document(RawDocument("dock.txt", "", "h", len(doc.text), "", doc.text.encode()))
    assert choose_strategy(as_text) == "recursive"  # From:, To:, Cc:, Date: four labels, no speaker twice
    assert choose_strategy(doc) == "recursive"
    assert choose_strategy(parse_document(RawDocument("t.eml", "", "h", 0, "", email_message()))) == "markdown"


def test_a_notebook_is_chunked_by_section_with_its_code_whole():
    from rag_assets.core.chunking.auto import choose_strategy
    from tests.support.bad_inputs import notebook

    book = parse_document(RawDocument("churn.ipynb", "", "h", 0, "", notebook()))
    assert choose_strategy(book) == "markdown"  # one heading only: by text alone, recursive
    chunks = chunk_document(book, ChunkingProfile("t", strategy="auto", max_tokens=64, overlap=0),
                            COUNTERS[MINILM_TOKENIZER], 256).chunks
    code = [c.text for c in chunks if "import pandas" in c.text]
    assert len(code) == 1 and "import pandas as pd\nevents = pd.read_parquet('events.parquet')" in code[0]


def test_a_chunk_has_the_page_where_it_starts_and_an_emails_body_none():
    from tests.support.bad_inputs import email_message

    mail = parse_document(RawDocument("dock.eml", "", "h", 0, "", email_message()))
    whole = chunk_document(mail, ChunkingProfile("t", strategy="auto", max_tokens=512, overlap=0),
                           COUNTERS[MINILM_TOKENIZER], 512).chunks
    assert len(whole) == 1 and whole[0].page is None  # starts in the headers: not the attached PDF's page 1
    small = chunk_document(mail, ChunkingProfile("t", strategy="auto", max_tokens=96, overlap=0),
                           COUNTERS[MINILM_TOKENIZER], 256).chunks
    pages = {c.text: c.page for c in small}
    assert [page for text, page in pages.items() if "From: Dana Lee" in text] == [None]
    assert [page for text, page in pages.items() if "Firmware 2.3 is the last" in text] == [1]


def test_a_chunk_records_the_page_where_it_ends(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "manual.pdf", [[f"Page {n} line {i}: the dock charges the robot in ninety minutes." for i in range(6)]
                                        for n in range(1, 5)])
    data = (tmp_path / "manual.pdf").read_bytes()
    doc = parse_document(RawDocument("manual.pdf", "", content_hash(data), len(data), "", data))
    assert {e.page for e in doc.elements} == {1, 2, 3, 4}
    for max_tokens in (64, 128, 512):
        chunks = chunk_document(doc, ChunkingProfile("t", strategy="recursive", max_tokens=max_tokens, overlap=0),
                                COUNTERS[MINILM_TOKENIZER], 512).chunks
        for chunk in chunks:  # the last page of any element the chunk's text overlaps
            last = max(e.page for e in doc.elements if e.start < chunk.end and e.end > chunk.start)
            assert (chunk.page, chunk.page_end) == (chunk.page, last) and chunk.page <= last
        if max_tokens == 512:
            assert (chunks[0].page, chunks[0].page_end) == (1, 4)  # was: page 1 alone, cited "p. 1"


def test_faq_pairs_stay_whole_and_transcript_turns_too():
    faq = (SAMPLE / "support" / "customer_faq.md").read_text()
    spans = STRATEGIES["faq"](200, 0, COUNTERS[MINILM_TOKENIZER]).chunk(faq)
    for question in ("Q: What is your refund policy?", "Q: How long is the warranty?"):
        holder = [faq[s.start : s.end] for s in spans if question in faq[s.start : s.end]]
        assert len(holder) == 1 and holder[0].count("Q:") == 1
        answer_start = faq.index("A:", faq.index(question))
        answer_end = faq.find("\n\n", answer_start)
        assert faq[answer_start : answer_end if answer_end > 0 else len(faq)].strip() in holder[0]
    transcript = (SAMPLE / "meetings" / "2026-04-02_standup_transcript.txt").read_text()
    turns = STRATEGIES["transcript"](120, 0, COUNTERS[MINILM_TOKENIZER]).chunk(transcript)
    for s in turns:
        chunk = transcript[s.start : s.end]
        assert chunk.rstrip().endswith((".", "?", "!")) or s is turns[-1]


@pytest.mark.parametrize("labels", [
    ["Übersicht", "Änderungen", "Ergebnisse", "Öffnungszeiten"],  # German minutes
    ["Примечание", "Исправлено", "Добавлено", "Изменено"],  # Russian release notes
    ["Fixed", "Added", "Changed", "Removed"],  # a changelog
    ["Ⅰ", "Ⅱ", "Ⅲ", "Ⅳ"],  # Roman numerals: no capital letters
])
def test_labelled_lines_said_once_each_are_no_transcript(labels):
    from rag_assets.core.chunking.auto import choose_strategy

    text = "\n".join(f"{label}: the text that goes with this label, a sentence long." for label in labels)
    doc = parse_document(RawDocument("notes.txt", "", "h", len(text), "", text.encode()))
    assert choose_strategy(doc) == "recursive"


def test_turns_of_speakers_named_in_any_script_and_stamped_past_99_hours():
    from rag_assets.core.chunking.auto import choose_strategy

    lines = ["Élodie: Bonjour à tous, on commence par le budget.", "Øystein: Greit, jeg har tallene her.",
             "Ärztin: Die Zahlen stimmen nicht ganz.", "Élodie: Alors on les revoit demain."]
    stamped = "\n".join(f"[{100 + i}:00:0{i}] {line}" for i, line in enumerate(lines))
    for text in ("\n".join(lines), stamped):
        doc = parse_document(RawDocument("reunion.txt", "", "h", len(text), "", text.encode()))
        assert choose_strategy(doc) == "transcript"
        line_starts = {0, *(i + 1 for i, ch in enumerate(doc.text) if ch == "\n")}
        spans = STRATEGIES["transcript"](40, 0, COUNTERS[MINILM_TOKENIZER]).chunk(doc.text)
        assert len(spans) >= 2 and {s.start for s in spans} <= line_starts  # cut only where a turn opens


@pytest.mark.parametrize("marker", ["Q: ", "## "])
def test_faq_question_longer_than_the_limit_is_split_and_not_repeated_as_context(marker):
    counter = COUNTERS[MINILM_TOKENIZER]
    question = marker + " ".join(f"word{i}" for i in range(300)) + "?\n"
    text = "# FAQ\n\n" + question + "A: The answer is here. " * 100 + "\n\nQ: Short?\nA: Yes.\n"
    spans = STRATEGIES["faq"](128, 0, counter).chunk(text)
    covered = bytearray(len(text))
    for span in spans:
        assert span.tokens == counter.count(text[span.start : span.end]) <= 128
        assert counter.count(span.context + text[span.start : span.end]) <= 128
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    assert not any(span.context for span in spans)
    # A question that leaves room for its answer is still repeated with each piece of it.
    text = "Q: Short question?\nA: " + "The answer is here. " * 100
    assert {s.context for s in STRATEGIES["faq"](128, 0, counter).chunk(text)[1:]} == {"Q: Short question?\n"}


def test_code_chunks_follow_functions_and_classes():
    code = (SAMPLE / "engineering" / "inventory_client.py").read_text()
    spans = STRATEGIES["code"](120, 0, COUNTERS[MINILM_TOKENIZER]).chunk(code)
    paths = [s.heading_path for s in spans]
    assert ("InventoryClient", "stock") in paths and ("low_stock_report",) in paths
    stock = spans[paths.index(("InventoryClient", "stock"))]
    assert code[stock.start : stock.end].lstrip().startswith("def stock")
    assert stock.context.startswith("class InventoryClient")
    assert not code[spans[0].start : spans[0].end].strip().startswith("import") or "def " in code[spans[0].start : spans[0].end] \
        or "LOW_STOCK" in code[spans[0].start : spans[0].end]


def test_code_the_python_parser_cannot_hold_is_cut_by_lines():
    """A generated 3000-line expression (valid Python) and a long line of keyword-free words raised
    RecursionError / MemoryError from ast.parse: the document failed instead of being cut by lines."""
    generated = "QUERY = (\n" + "\n".join(f'    "col_{i}, " +' for i in range(3000)) + '\n    "end"\n)\n'
    words = " ".join(f"word{i}" for i in range(2500)) + "\n"
    for text in (generated, words):
        spans = STRATEGIES["code"](120, 0, COUNTERS[MINILM_TOKENIZER]).chunk(text)
        assert spans and all(s.end > s.start for s in spans)
        assert spans[0].start == 0 and spans[-1].end >= len(text.rstrip())


def test_sentence_window_carries_its_window():
    text = "One is first. Two follows. Three is here. Four comes next. Five ends it."
    spans = STRATEGIES["sentence_window"](64, 0, COUNTERS["cl100k_base"], window=1).chunk(text)
    assert [text[s.start : s.end] for s in spans][2] == "Three is here."
    assert text[spans[2].window[0] : spans[2].window[1]] == "Two follows. Three is here. Four comes next."


def test_a_sentence_of_marks_joins_the_sentence_before_it():
    """A rule ("---"), a signature line of dots or a lone ")" was a sentence, so an index row of
    punctuation in the sentence strategies."""
    text = "(\n\nThe tenant signs here.\n\n.................................\n\nThe landlord signs. ---\n\n***\n"
    for name in ("sentence_window", "sentence"):
        spans = STRATEGIES[name](64, 0, COUNTERS[MINILM_TOKENIZER]).chunk(text)
        assert all(any(c.isalnum() for c in text[s.start : s.end]) for s in spans), name
    spans = STRATEGIES["sentence_window"](64, 0, COUNTERS[MINILM_TOKENIZER]).chunk(text)
    assert [text[s.start : s.end] for s in spans] == [
        "(\n\nThe tenant signs here.\n\n.................................", "The landlord signs. ---\n\n***"]
    marks = "---\n\n***"
    assert [marks[s.start : s.end] for s in STRATEGIES["sentence_window"](16, 0, COUNTERS[MINILM_TOKENIZER])
            .chunk(marks)] == [marks]  # marks alone: one chunk


def test_sentence_window_splits_a_long_sentence_into_few_pieces_that_window_the_whole_sentence():
    """A sentence over the budget becomes the fewest pieces that fit (not a row per word), and
    each piece's window is the whole sentence when its rest fits one more chunk; a run-on longer
    than that keeps windows of pieces."""
    counter = COUNTERS["cl100k_base"]
    long = "The committee that met on Tuesday approved the budget for roads, bridges, schools and parks across the county."
    runon = "Then " + " ".join(["word"] * 40) + "."
    text = f"Short one came first. {long} {runon} Last one here."
    assert 16 < counter.count(long) <= 32 and counter.count(runon) > 32
    spans = STRATEGIES["sentence_window"](16, 0, counter, window=0).chunk(text)
    a, b = text.index(long), text.index(long) + len(long)
    of_long = [s for s in spans if a <= s.start and s.end <= b]
    assert len(of_long) == 2 and (of_long[0].start, of_long[-1].end) == (a, b)
    assert all(s.window == (a, b) for s in of_long)
    of_runon = [s for s in spans if s.start >= text.index(runon) and s.end <= text.index(runon) + len(runon)]
    assert len(of_runon) == 3 and all(s.window == (s.start, s.end) for s in of_runon)
    assert all(s.tokens <= 16 for s in spans)
    first = STRATEGIES["sentence_window"](16, 0, counter, window=1).chunk(text)[0]
    assert text[first.window[0]:first.window[1]] == f"Short one came first. {long}"


def test_sentence_strategies_keep_a_code_block_whole_where_it_fits():
    """A code block is one unit of the sentence strategies: a YAML block's list items, "# comment"
    lines and blank-line paragraphs were sentences of their own (a result was one line of config)."""
    block = ("```yaml\n# Where the index lives\nindex:\n  uri: s3://acme/index\n\n# Who may read it\n"
             "readers:\n  - analysts\n  - support\n```")
    text = f"# Deploy\n\nSet the index location. Then list the readers.\n\n{block}\n\nRestart the service.\n"
    elements = markdown_elements(text)
    counter = COUNTERS[MINILM_TOKENIZER]
    for name, options in (("sentence_window", {"window": 0}), ("sentence", {})):
        spans = STRATEGIES[name](128 if name == "sentence_window" else 40, 0, counter, **options).chunk(text, elements)
        assert block in [text[s.start : s.end] for s in spans], name
    long = "```yaml\n" + "".join(f"# step {i}\n- run: make target{i}\n\n" for i in range(40)) + "```"
    text = f"Steps.\n\n{long}\n"
    spans = STRATEGIES["sentence_window"](32, 0, counter, window=0).chunk(text, markdown_elements(text))
    code = [s for s in spans if s.start >= text.index("```")]
    assert len(code) <= -(-counter.count(long) // 25)  # pieces of about the budget, not a piece a line
    assert all(text[s.start : s.end].startswith(("# step", "```")) for s in code)  # cut at lines


@pytest.mark.parametrize("name", ["semantic", "sentence", "sentence_window"])
def test_a_long_code_block_with_lines_of_white_space_is_chunked_without_empty_pieces(name):
    """A code block over the budget is cut at its lines; a line of indentation alone among them was a
    piece of white space, whose semantic window was empty (IndexError: the document failed)."""
    body = "".join(f"    total_{i} = compute(orders[{i}], rate=0.2)\n" for i in range(20))
    text = f"Intro sentence. Another one.\n\n```python\ndef main():\n{body}\n    \n{body}    \n  \n```\n"
    counter = COUNTERS[MINILM_TOKENIZER]
    spans = make(name, 128, 0, counter).chunk(text, markdown_elements(text))
    assert all(text[s.start : s.end].strip() == text[s.start : s.end] != "" for s in spans)
    assert spans[-1].end == len(text.rstrip()) and all(s.tokens <= 128 for s in spans)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, max_tokens=st.integers(16, 96))
def test_sentence_window_windows_are_the_chunk_or_a_whole_sentence_made_of_chunks(text, max_tokens):
    from rag_assets.core.chunking.prose import prose_units

    spans = STRATEGIES["sentence_window"](max_tokens, 0, COUNTERS[MINILM_TOKENIZER], window=0).chunk(text)
    sentences = set(prose_units(text))  # its units: sentences, a sentence of marks joined to the one before
    for span in spans:
        assert span.window[0] <= span.start and span.end <= span.window[1]
        if span.window != (span.start, span.end):
            assert span.window in sentences
            inside = [s for s in spans if span.window[0] <= s.start and s.end <= span.window[1]]
            assert (inside[0].start, inside[-1].end) == span.window


def test_semantic_breaks_where_the_topic_changes():
    from rag_assets.core.embedding import LocalMiniLMEmbedder

    robots = " ".join(f"The cleaning robot's brush motor number {i} needs maintenance." for i in range(6))
    cooking = " ".join(f"Bake the bread dough at {200 + i} degrees with yeast and flour." for i in range(6))
    text = robots + " " + cooking
    chunker = STRATEGIES["semantic"](200, 0, COUNTERS[MINILM_TOKENIZER], embed=LocalMiniLMEmbedder().embed,
                                     percentile=90, min_tokens=0)
    spans = chunker.chunk(text)
    assert any(text[s.start : s.end].startswith("Bake the bread dough at 200") for s in spans)
    assert all(not ("robot" in text[s.start : s.end] and "dough" in text[s.start : s.end]) for s in spans)


def test_auto_picks_by_type_and_structure():
    from rag_assets.core.chunking.auto import choose_strategy
    from rag_assets.core.sources import read_disk

    expected = {
        "engineering/inventory_client.py": "code",
        "engineering/spare_parts.csv": "table",
        "support/customer_faq.md": "faq",
        "meetings/2026-04-02_standup_transcript.txt": "transcript",
        "handbook/employee_handbook.md": "markdown",
        "notes/office_wifi.txt": "recursive",
    }
    for doc_id, strategy in expected.items():
        assert choose_strategy(parse_document(read_disk(SAMPLE, doc_id))) == strategy, doc_id


def test_sentence_window_embeds_each_sentence_in_its_context_within_the_limit():
    text = "Refunds take 45 days. They go to the original card. Shipping is free over 50 EUR. Returns cost 9.90 EUR."
    data = text.encode()
    doc = parse_document(RawDocument("p.txt", "", content_hash(data), len(data), "v", data))
    counter = COUNTERS[MINILM_TOKENIZER]
    profile = ChunkingProfile("w", strategy="sentence_window", max_tokens=128, window=1, embed_window=1, min_tokens=0)
    chunks = chunk_document(doc, profile, counter, model_limit=256).chunks
    second = chunks[1]
    assert second.text == "They go to the original card."
    assert "Refunds take 45 days." in second.embed_text and "Shipping is free" in second.embed_text
    assert all(counter.count(c.embed_text) == c.tokens <= 128 for c in chunks)
    bare = ChunkingProfile("w", strategy="sentence_window", max_tokens=128, window=1, embed_window=1, min_tokens=0,
                           contextual_header=False)
    tight = chunk_document(doc, bare, counter, model_limit=16).chunks
    assert [c.text for c in tight] == [c.text for c in chunks]
    assert all(c.tokens <= 16 for c in tight)  # the context is dropped where it does not fit, never the sentence
    assert any(c.embed_text.strip() == c.text for c in tight)


def test_a_profile_sized_with_another_tokenizer_keeps_rows_within_the_row_token_limit():
    """fixed_200_0 counts 200 cl100k tokens: in MiniLM's wordpieces its rows run past 200, so
    their limit is the model's input limit, which every row meets (header included)."""
    from rag_assets.core.sources import read_disk

    doc = parse_document(read_disk(SAMPLE, "handbook/employee_handbook.md"))
    counter = COUNTERS[MINILM_TOKENIZER]
    sized = ChunkingProfile("fixed_200_0", strategy="fixed", max_tokens=200, contextual_header=False,
                            size_tokenizer="cl100k_base")
    assert row_token_limit(sized, counter.name, 256) == 256
    chunks = chunk_document(doc, sized, counter, model_limit=256).chunks
    assert max(c.tokens for c in chunks) > 200
    assert all(counter.count(c.embed_text) == c.tokens <= 256 for c in chunks)
    cl100k = COUNTERS["cl100k_base"]
    assert all(cl100k.count(c.text) <= 200 for c in chunks)
    own = ChunkingProfile("own", max_tokens=200)
    assert row_token_limit(own, counter.name, 256) == row_token_limit(sized, "cl100k_base", 8191) == 200
    assert row_token_limit(own, counter.name, 128) == 128


@pytest.mark.parametrize("heading", ["!?" * 120, "参考資料" * 40, "x" * 400])
def test_a_header_sized_with_another_tokenizer_fits_the_model_too(heading):
    """A profile sizing chunks in cl100k with its contextual header on: a section line of 32 cl100k
    tokens may be 200 wordpieces ("!?" runs), which the model-side split had reserved 32 for."""
    text = f"# Guide\n\n## {heading}\n\n" + "The refund policy covers damaged items. " * 60
    doc = parse_document(RawDocument("g.md", "", "h", len(text), "", text.encode()))
    counter = COUNTERS[MINILM_TOKENIZER]
    sized = ChunkingProfile("r", strategy="recursive", max_tokens=200, size_tokenizer="cl100k_base")
    chunks = chunk_document(doc, sized, counter, model_limit=256).chunks
    assert chunks and all(counter.count(c.embed_text) == c.tokens <= 256 for c in chunks)
    assert all(COUNTERS["cl100k_base"].count(c.embed_text) <= 200 for c in chunks)
    assert get_token_counter("cl100k_base") is get_token_counter("cl100k_base")  # built once a process


def test_a_class_line_longer_than_half_the_limit_is_not_repeated_before_its_methods():
    """Generated code with a long base list or trailing comment: repeated before each method, its
    class line left no room (the whole file failed: 'max_tokens=-90 leaves no room')."""
    source = ("class Handler(Base):  # " + "generated " * 300 + "\n"
              + "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(60)))
    doc = parse_document(RawDocument("h.py", "", "h", len(source), "", source.encode()))
    counter = COUNTERS[MINILM_TOKENIZER]
    chunks = chunk_document(doc, ChunkingProfile("d", strategy="code", max_tokens=256), counter, 256).chunks
    assert all(doc.text[c.start : c.end] == c.text and counter.count(c.embed_text) <= 256 for c in chunks)
    covered = "".join(doc.text[c.start : c.end] for c in chunks)
    assert "".join(covered.split()) == "".join(doc.text.split())
    assert not any("generated generated" in c.embed_text and "def m" in c.embed_text
                   and c.embed_text.index("generated") < c.embed_text.index("def m") and "class" not in c.text
                   for c in chunks)  # the class line is no method's context


def test_a_type_mapped_to_table_is_chunked_as_one_only_where_it_holds_a_table():
    """recommended maps json to table: JSON that is no records (a config, pretty-printed) was read
    as a CSV, its "{" the header row embedded before every piece as "{: ..."."""
    import json

    profile = ChunkingProfile("p", strategy="recursive", content_types=(("json", "table"), ("csv", "table")))
    config = json.dumps({"service": {"description": "Handles invoices, refunds. " * 40}}, indent=1).encode()
    records = json.dumps([{"sku": f"A{i}", "name": f"part {i}"} for i in range(40)]).encode()
    docs = {name: parse_document(RawDocument(name, "", "h", len(data), "", data))
            for name, data in (("config.json", config), ("parts.json", records), ("parts.csv", b"sku,name\nA1,arm\n"))}
    assert {name: profile.strategy_for(doc) for name, doc in docs.items()} == {
        "config.json": "recursive", "parts.json": "table", "parts.csv": "table"}
    chunks = chunk_document(docs["config.json"], profile, COUNTERS[MINILM_TOKENIZER], 256).chunks
    assert len(chunks) > 1 and not any("{:" in c.embed_text for c in chunks)


def test_a_size_tokenizer_naming_the_models_own_sizes_as_no_size_tokenizer_does():
    from rag_assets.core.tokens import WordPieceCounter

    text = "The refund policy covers damaged items within thirty days of delivery. " * 80
    doc = parse_document(RawDocument("r.txt", "", "h", len(text), "", text.encode()))
    counter = WordPieceCounter(MINILM_TOKENIZER)  # any counter object of that tokenizer
    plain = ChunkingProfile("p", strategy="recursive", max_tokens=512)
    named = ChunkingProfile("n", strategy="recursive", max_tokens=512, size_tokenizer=MINILM_TOKENIZER)
    spans = [[(c.start, c.end) for c in chunk_document(doc, p, counter, 256).chunks] for p in (plain, named)]
    assert spans[0] == spans[1] and max(b - a for a, b in spans[0]) > 0
