"""The stage store's two backends (a folder, S3 on a real SeaweedFS server) keep one contract:
content-addressed artifacts, per-document pointers, damaged entries removed, and concurrent
writers of one key never show a reader half an object."""

from __future__ import annotations

import json
import pickle
import threading
import time
from pathlib import Path

import boto3
import dagster as dg
import pytest
import yaml

from rag_assets.cli import main
from rag_assets.config import load_project
from rag_assets.core.hashing import content_hash
from rag_assets.core.store import FolderBlobs, S3Blobs, StageStore
from rag_assets.defs.resources import stage_store_resource
from tests.conftest import env, make_project

KEY, SECRET = "rag-store-key", "rag-store-secret"


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    from tests.support.seaweed import seaweed_s3

    with seaweed_s3(tmp_path_factory.mktemp("seaweed"), KEY, SECRET) as endpoint:
        client(endpoint).create_bucket(Bucket="stages")
        yield endpoint


def client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                        region_name="us-east-1")


@pytest.fixture(params=["folder", "s3"])
def store(request, tmp_path):
    if request.param == "folder":
        return StageStore(FolderBlobs(tmp_path / "stages"))
    endpoint = request.getfixturevalue("s3_endpoint")
    return StageStore(S3Blobs(client(endpoint), "stages", f"{request.node.name}/stages/c"))


def test_artifacts_and_pointers_round_trip(store):
    data = b"raw bytes of a document"
    key = content_hash(data)
    assert not store.has("raw", key) and store.load_bytes("raw", key, content_hash) is None
    store.put_bytes("raw", key, data)
    assert store.has("raw", key) and store.load_bytes("raw", key, content_hash) == data
    store.put("parsed", "k1", {"text": "parsed"})
    assert store.load("parsed", "k1") == {"text": "parsed"} and store.load("parsed", "absent") is None
    store.set_current("parsed", "a/b.md", key="k1", size=3)
    assert store.current("parsed", "a/b.md") == {"doc_id": "a/b.md", "key": "k1", "size": 3}
    store.forget("a/b.md")
    assert store.current("parsed", "a/b.md") is None and store.has("parsed", "k1")  # artifacts stay


def test_damaged_entries_are_removed_not_trusted(store):
    data = b"original"
    key = content_hash(data)
    store.blobs.write(store._artifact("raw", key), b"origi")  # bytes off their hash
    store.blobs.write(store._artifact("chunks", "k"), pickle.dumps([1, 2, 3])[:-3])  # cut-off pickle
    store.blobs.write(store._pointer("index", "d.md"), b'{"doc_id": "d.md", "key": ')  # cut-off pointer
    assert store.load_bytes("raw", key, content_hash) is None and not store.has("raw", key)
    assert store.load("chunks", "k") is None and not store.has("chunks", "k")
    assert store.current("index", "d.md") is None and not store.blobs.exists(store._pointer("index", "d.md"))


def test_concurrent_writers_of_one_key_never_show_a_reader_half_an_object(s3_endpoint):
    """Four writers (own clients, as four workers would have) publish the same 8 MB artifact and
    their own pointer record for one document while a reader polls both: every read is absent or
    whole, and the last pointer is one writer's complete record."""
    prefix = "concurrent/stages/c"
    payload = bytes(range(256)) * (8 * 2**20 // 256)
    key = content_hash(payload)
    errors: list[str] = []
    done = threading.Event()

    def write(n: int) -> None:
        mine = StageStore(S3Blobs(client(s3_endpoint), "stages", prefix))
        for round_ in range(3):
            mine.blobs.write(mine._artifact("raw", key), payload)
            mine.set_current("raw", "doc.md", key=key, writer=n, round=round_)

    def read() -> None:
        mine = StageStore(S3Blobs(client(s3_endpoint), "stages", prefix))
        while not done.is_set():
            try:
                data = mine.get_bytes("raw", key)
                if data != payload:
                    errors.append(f"artifact read {len(data)} of {len(payload)} bytes")
            except FileNotFoundError:
                pass
            record = mine.blobs.exists(mine._pointer("raw", "doc.md")) and mine.current("raw", "doc.md")
            if record is None:
                errors.append("a pointer was present but did not parse (and was removed)")

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join(timeout=120)
    done.set()
    reader.join(timeout=60)
    assert not errors, errors[:5]
    final = StageStore(S3Blobs(client(s3_endpoint), "stages", prefix)).current("raw", "doc.md")
    assert final["key"] == key and final["writer"] in range(4) and final["round"] == 2


def test_an_s3_data_dir_gives_each_corpus_a_prefix_keys_through_env_vars_and_a_local_lock(
        tmp_path, s3_endpoint, capsys):
    values = make_project(tmp_path / "p")
    project_file = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"
    project = yaml.safe_load(project_file.read_text())
    project["data_dir_s3"] = {"endpoint_url": s3_endpoint, "region": "us-east-1",
                              "access_key_env": "RAG_STAGES_KEY", "secret_key_env": "RAG_STAGES_SECRET"}
    project_file.write_text(yaml.safe_dump(project))
    values.update(RAG_DATA_DIR="s3://stages/team-a", RAG_STAGES_KEY=KEY, RAG_STAGES_SECRET=SECRET)
    with env(**values):
        corpus = load_project().corpus("sample")
        assert corpus.stage_store == "s3://stages/team-a/stages/sample"
        assert corpus.lock_dir.startswith(str(tmp_path)) and "s3:" not in corpus.lock_dir
        resource = stage_store_resource(corpus)
        assert "rag-store" not in json.dumps(resource.model_dump(), default=str)  # keys are EnvVar names
        with dg.build_resources({"store": resource}) as resources:
            stage_store = resources.store.get_store()
    stage_store.set_current("raw", "a.md", key="k")
    listed = client(s3_endpoint).list_objects_v2(Bucket="stages", Prefix="team-a/stages/sample/current/raw/")
    assert listed["KeyCount"] == 1 and str(stage_store) == "s3://stages/team-a/stages/sample"

    # `rag gc` reaches the same prefixes with the same keys: garbage collected, a retired corpus listed.
    stage_store.put_bytes("raw", "old", b"an old version")
    StageStore(S3Blobs(client(s3_endpoint), "stages", "team-a/stages/retired")).set_current("raw", "b.md", key="x")
    with env(**values):
        capsys.readouterr()
        assert main(["gc", "--json", "--older-than-days", "0"]) == 0
        report = json.loads(capsys.readouterr().out)
    assert report["corpora"]["sample"]["stages"]["raw"]["removed"] == 1 and not stage_store.has("raw", "old")
    assert [(u["corpus"], u["files"]) for u in report["undeclared"]] == [("retired", 1)]


def _write(store, stage: str, key: str, data: bytes = b"x") -> str:
    store.blobs.write(store._artifact(stage, key), data)
    return key


def test_garbage_is_what_no_current_record_names_once_older_than_the_grace(store):
    """Each artifact stage's keys are kept while a record names them (chunks: the chunks,
    embeddings or index record; vectors: the embeddings record's ``vectors``), and the newest
    listing whatever names it; the rest goes once older than the grace, never in a dry run."""
    from rag_assets.core.garbage import collect_garbage

    kept = {"raw": {_write(store, "raw", "r-now")}, "parsed": {_write(store, "parsed", "p-now")},
            "chunks": {_write(store, "chunks", c) for c in ("c-now", "c-embedded", "c-indexed")},
            "vectors": {_write(store, "vectors", "v-now")}}
    old = {"raw": {_write(store, "raw", "r-old", b"12345")}, "parsed": {_write(store, "parsed", "p-old")},
           "chunks": {_write(store, "chunks", "c-other-profile")}, "vectors": {_write(store, "vectors", "v-old")}}
    store.set_current("raw", "a.md", key="r-now", uri="file:///a.md", size=1, source_version="1")
    store.set_current("parsed", "a.md", key="p-now", content_hash="r-now")
    store.set_current("chunks", "a.md", key="c-now", content_hash="r-now")
    store.set_current("embeddings", "a.md", key="c-embedded", vectors="v-now", model="m", content_hash="r-now")
    store.set_current("index", "a.md", key="c-indexed", content_hash="r-now")
    store.set_current("index", "b.md", key=None, error="cannot parse")  # a failure names nothing
    _write(store, "listing", "l-older")
    time.sleep(1.1)  # S3 keeps whole seconds
    _write(store, "listing", "l-newest")
    week = 7 * 86400

    report = collect_garbage(store, week)  # everything was written just now
    assert report.removed == 0 and report.stages["raw"].recent == 1 and report.stages["listing"].recent == 1
    hours = collect_garbage(store, week, now=time.time() + 7200, dry_run=True)  # a listing not the newest: an hour
    assert hours.stages["listing"].removed == 1 and hours.removed == 1
    later = time.time() + week + 60
    dry = collect_garbage(store, week, now=later, dry_run=True)
    assert {stage: t.removed for stage, t in dry.stages.items()} == {
        "raw": 1, "parsed": 1, "chunks": 1, "vectors": 1, "listing": 1}
    assert dry.stages["raw"].removed_bytes == 5 and store.has("raw", "r-old") and store.has("listing", "l-older")

    done = collect_garbage(store, week, now=later)
    assert done.to_dict()["removed"] == 5
    for stage in kept:
        assert {store.key_of(blob) for blob in store.listing(f"{stage}/")[0]} == kept[stage], stage
        assert not any(store.has(stage, key) for key in old[stage])
    assert {store.key_of(blob) for blob in store.listing("listing/")[0]} == {"l-newest"}
    assert store.current("embeddings", "a.md")["vectors"] == "v-now"

    store.forget("a.md")  # a deleted document: its artifacts are garbage too
    assert collect_garbage(store, week, now=later).stages["chunks"].removed == 3
    assert not any(store.listing(f"{stage}/")[0] for stage in kept)


def test_a_killed_writers_temporary_files_go_and_are_never_read_as_records(tmp_path):
    from rag_assets.core.garbage import collect_garbage

    store = StageStore(FolderBlobs(tmp_path / "stages"))
    store.set_current("raw", "a.md", key="r", uri="u", size=1, source_version="1")
    _write(store, "raw", "r")
    pointer = Path(store.blobs.root / store._pointer("raw", "a.md"))
    left = [pointer.parent / f".tmp-host-1-2-{pointer.name}", tmp_path / "stages" / "raw" / "r" / ".tmp-host-1-2-r.bin"]
    for path in left:
        path.write_bytes(b'{"doc_id": "half')
    assert [r["doc_id"] for r in store.read_records(store.listing("current/raw/")[0])] == ["a.md"]
    assert collect_garbage(store, 3600).temporary_removed == 0 and all(p.exists() for p in left)
    report = collect_garbage(store, 3600, now=time.time() + 7200)
    assert report.temporary_removed == 2 and not any(p.exists() for p in left)
    assert store.has("raw", "r") and store.current("raw", "a.md")["key"] == "r"


def _stages(store) -> FolderBlobs | S3Blobs:
    """The folder (or prefix) that holds ``store`` beside other corpora's stores."""
    blobs = store.blobs
    if isinstance(blobs, FolderBlobs):
        return FolderBlobs(blobs.root.parent)
    return S3Blobs(blobs.client, blobs.bucket, blobs.prefix.rsplit("/", 1)[0])


def test_stores_of_undeclared_corpora_are_found_by_their_layout_and_removed_whole(store):
    from rag_assets.core.garbage import undeclared_stores

    stages = _stages(store)
    store.set_current("raw", "a.md", key="r")  # the declared corpus
    declared = str(store).rstrip("/").rsplit("/", 1)[-1]
    old = StageStore(FolderBlobs(stages.root / "old") if isinstance(stages, FolderBlobs)
                     else S3Blobs(stages.client, stages.bucket, f"{stages.prefix}/old"))
    old.set_current("raw", "b.md", key="k")
    _write(old, "raw", "k", b"12345678")
    stages.write("notes/readme.txt", b"not a stage store")  # no records: never taken for one
    (found,) = undeclared_stores(stages, {declared})
    assert (found.corpus, found.files, found.bytes) == ("old", 2, 8 + len(old.blobs.read(old._pointer("raw", "b.md"))))
    assert undeclared_stores(stages, {declared, "old"}) == []
    stages.remove_folder("old/")
    assert undeclared_stores(stages, {declared}) == [] and not list(stages.list("old/"))
    assert store.current("raw", "a.md")["key"] == "r" and stages.exists("notes/readme.txt")
