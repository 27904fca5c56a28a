"""The chunking profile schema and the core profile and strategy registry it is read into."""

from dataclasses import fields
from typing import get_args

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import STRATEGIES, ChunkingProfile
from rag_assets.core.parsing import CONTENT_TYPE_NAMES, content_type_for


def test_a_profile_entry_and_the_core_profile_have_the_same_fields_and_defaults():
    assert set(ChunkingProfileConfig.model_fields) - {"description"} == {f.name for f in fields(ChunkingProfile)}
    assert profile_from_config(ChunkingProfileConfig(name="p")) == ChunkingProfile("p")


def test_the_schema_accepts_exactly_the_registered_strategies_and_parsed_content_types():
    strategy = ChunkingProfileConfig.model_fields["strategy"].annotation
    assert set(get_args(strategy)) == set(STRATEGIES) | {"auto"}
    content_types = get_args(ChunkingProfileConfig.model_fields["content_types"].annotation)[0]
    assert set(get_args(content_types)) == set(CONTENT_TYPE_NAMES)
    assert content_type_for("notes.unknown") in CONTENT_TYPE_NAMES


def test_the_shipped_prose_profile_chunks_csv_and_workbooks_by_whole_records_and_code_by_function():
    import json

    from rag_assets.config import load_project
    from rag_assets.core.chunking import chunk_document
    from rag_assets.core.hashing import content_hash
    from rag_assets.core.models import RawDocument
    from rag_assets.core.parsing import parse_document
    from rag_assets.core.tokens import get_token_counter
    from tests.support.bad_inputs import workbook

    recommended = profile_from_config(next(p for p in load_project().chunking_profiles if p.name == "recommended"))
    records = ["id;name;notes"] + [f'{i};Name {i};"Shipped. Paid.\nClosed."' for i in range(40)]
    files = {"export.csv": "\n".join(records) + "\n",
             "app.py": "def load(path):\n    '''Load it. Then parse it.'''\n    return open(path).read()\n"}
    export = json.dumps([{"part": f"NW-{i}", "note": "Shipped. Paid."} for i in range(60)])
    for name, text in [*files.items(), ("stock.xlsx", workbook(rows=60)), ("export.json", export)]:
        data = text if isinstance(text, bytes) else text.encode()
        doc = parse_document(RawDocument(name, f"file:///{name}", content_hash(data), 1, "v", data))
        chunks = chunk_document(doc, recommended, get_token_counter("wordpiece:all-minilm-l6-v2"), 256).chunks
        if name == "app.py":
            assert [c.text for c in chunks] == [text.rstrip()]
            continue
        if name == "stock.xlsx":  # a sheet's rows under its header, as CSV's
            rows = [c for c in chunks if "NW-BRUSH-1" in c.text]
            assert len(rows) > 1 and all(c.embed_text.count("| Part | Name | Units |") == 1 for c in rows)
            continue
        if name == "export.json":  # JSON records likewise (sentences split them, the header apart)
            assert len(chunks) > 1 and all(c.embed_text.count("| part | note |") == 1 for c in chunks)
            assert all(c.text.endswith("Paid. |") for c in chunks)
            continue
        starts = {doc.text.index(record) for record in records}
        ends = {doc.text.index(record) + len(record) for record in records}
        assert len(chunks) > 1 and all(c.start in starts and c.end in ends for c in chunks)
