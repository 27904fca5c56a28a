"""Per-document read failures in the sweep: a refused or oversize document fails alone without
being read, a source outage fails the whole sweep without changing anything, and identical
bytes under two paths parse as two documents."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError
from rag_assets.core.pipeline import parse_stage, snapshot_raw
from rag_assets.core.planning import plan_sweep
from rag_assets.core.sources import BROKEN_LINK, DocumentRef, _folder_filter, matches, too_large
from rag_assets.core.store import StageStore


def raw(doc_id: str, data: bytes) -> RawDocument:
    return RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data)


def never_read(doc_id):
    raise AssertionError(f"{doc_id} must not be read")


def test_oversize_and_refused_documents_fail_alone_without_being_read(tmp_path):
    store = StageStore(tmp_path)
    refs = [DocumentRef("big.txt", "file:///big.txt", 5_000_000, "mtime:1"),
            DocumentRef("leak.md", "file:///leak.md", 0, "refused", refused="symlink resolves outside the source root")]
    plan = plan_sweep(refs, never_read, store, [], "profile", "model", max_bytes=1_000_000)
    assert plan.work == ["big.txt", "leak.md"] and plan.hashed == 0 and not plan.snapshots
    big = parse_stage(store, "big.txt")
    assert big.status == "failed" and big.error.startswith("big.txt: 4.8 MB exceeds the source's limit of 0.9537 MB")
    assert "max_document_mb" in big.error
    assert too_large(2_500, int(0.002 * 2**20)).startswith("0.00238 MB exceeds the source's limit of 0.002 MB")
    assert parse_stage(store, "leak.md").error == "leak.md: symlink resolves outside the source root"
    # Once the failure is recorded against this listing, an unchanged listing does no work...
    store.set_current("index", "big.txt", key=None, error=big.error, content_hash=None, profile_hash="profile",
                      model="model")
    assert "big.txt" not in plan_sweep(refs, never_read, store, ["big.txt", "leak.md"], "profile", "model",
                                       max_bytes=1_000_000).work
    # ...a raised limit reads it again, the same listing (its size was all that was wrong)...
    whole = raw("big.txt", b"x" * 5_000_000)
    raised = plan_sweep(refs[:1], lambda d: whole, store, ["big.txt", "leak.md"], "profile", "model", max_bytes=8_000_000)
    assert raised.work == ["big.txt"] and raised.snapshots == [whole]
    # ...and a document that shrank under the limit is read again.
    small = raw("big.txt", b"# Big\n\nNow small.\n")
    again = plan_sweep([DocumentRef("big.txt", "file:///big.txt", small.size, "mtime:2")], lambda d: small, store,
                       ["big.txt"], "profile", "model", max_bytes=1_000_000)
    assert again.work == ["big.txt"] and again.snapshots == [small]


def test_a_document_error_while_reading_fails_that_document_and_an_outage_fails_the_sweep(tmp_path):
    store = StageStore(tmp_path)
    refs = [DocumentRef("a.md", "file:///a.md", 5, "v1"), DocumentRef("b.md", "file:///b.md", 5, "v1")]

    def read(doc_id):
        if doc_id == "a.md":
            raise DocumentError(doc_id, "file kept changing while it was read")
        return raw(doc_id, b"hello")

    plan = plan_sweep(refs, read, store, [], "profile", "model")
    assert plan.work == ["a.md", "b.md"] and [d.doc_id for d in plan.snapshots] == ["b.md"]
    assert store.current("raw", "a.md")["error"] == "a.md: file kept changing while it was read"

    def down(doc_id):
        raise ConnectionError("server gone")

    fresh = StageStore(tmp_path / "other")
    with pytest.raises(ConnectionError):
        plan_sweep(refs, down, fresh, [], "profile", "model")
    assert fresh.current("raw", "a.md") is None and fresh.current("raw", "b.md") is None


def test_a_document_that_could_not_be_read_is_read_again_though_its_listing_is_unchanged(tmp_path):
    """A chmod (or a share back online) fixes a read without touching the file's size or mtime: the
    document stayed failed with the old cause, its old rows served, until the file was edited."""
    store = StageStore(tmp_path)
    refs = [DocumentRef("a.md", "file:///a.md", 5, "v1")]

    def denied(doc_id):
        raise DocumentError(doc_id, "cannot be read (Permission denied); check its permissions")

    assert plan_sweep(refs, denied, store, [], "profile", "model").work == ["a.md"]
    again = plan_sweep(refs, denied, store, ["a.md"], "profile", "model")
    assert again.unreadable == [] and again.hashed == 1  # tried again, the same failure reported once
    fixed = plan_sweep(refs, lambda doc_id: raw(doc_id, b"hello"), store, ["a.md"], "profile", "model")
    assert [d.doc_id for d in fixed.snapshots] == ["a.md"] and fixed.work == ["a.md"]
    assert store.current("raw", "a.md")["key"] == content_hash(b"hello")


def test_identical_bytes_under_two_paths_parse_as_two_documents(tmp_path):
    store = StageStore(tmp_path)
    data = b"Plain text without a heading.\n"
    for doc_id in ("first copy.txt", "second copy.txt"):
        snapshot_raw(store, raw(doc_id, data))
        assert parse_stage(store, doc_id).status == "computed"
    first, second = (store.get("parsed", store.current("parsed", d)["key"]) for d in ("first copy.txt", "second copy.txt"))
    assert (first.doc_id, first.title) == ("first copy.txt", "first copy")
    assert (second.doc_id, second.title) == ("second copy.txt", "second copy")


UNPRIVILEGED = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                "--inh-caps", "-dac_override,-dac_read_search"]
LISTING = """
import json, sys
from rag_assets.core.parsing import DocumentError
from rag_assets.core.sources import SourceUnavailable, list_disk, read_disk
out = {}
for name, include, exclude in (("all", ("**/*",), ()), ("private_excluded", ("**/*",), ("private/**",)),
                               ("nested_glob", ("private/**/*.md",), ()), ("yaml_only", ("**/*.yaml",), ()),
                               ("other_folder", ("public/**",), ())):
    try:
        refs = list_disk(sys.argv[1], include, exclude)
    except SourceUnavailable as exc:
        out[name] = str(exc)
        continue
    read = {}
    for ref in refs:
        if ref.refused:
            read[ref.doc_id] = ref.refused
            continue
        try:
            read[ref.doc_id] = read_disk(sys.argv[1], ref.doc_id).data.decode()
        except DocumentError as exc:
            read[ref.doc_id] = str(exc)
    out[name] = read
try:
    list_disk(sys.argv[1] + "/private", ("**/*",), ())
except SourceUnavailable as exc:
    out["root"] = str(exc)
print(json.dumps(out))
"""


def test_unreadable_files_and_looping_links_fail_alone_and_an_unreadable_folder_sweeps_nothing(tmp_path):
    import json
    import os
    import shutil
    import subprocess
    import sys

    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: permissions cannot be denied here")
    root = tmp_path / "src"
    (root / "private").mkdir(parents=True)
    (root / "ok.md").write_text("fine")
    (root / "private" / "plan.md").write_text("secret")
    (root / "private" / "plan.yaml").write_text("secret: 1")
    (root / "locked.md").write_text("x")
    (root / "loop.md").symlink_to("loop.md")
    (root / ".hidden_loop").symlink_to(".hidden_loop")
    (root / "locked.md").chmod(0)
    (root / "private").chmod(0)
    try:
        prefix = UNPRIVILEGED if os.geteuid() == 0 else []
        out = subprocess.run([*prefix, sys.executable, "-c", LISTING, str(root)], capture_output=True, text=True,
                             check=True)
    finally:
        (root / "private").chmod(0o755)
    result = json.loads(out.stdout)
    assert "private cannot be listed (Permission denied)" in result["all"] and "exclude: ['private/**']" in result["all"]
    assert result["private_excluded"] == {"locked.md": "locked.md: cannot be read (Permission denied); check its "
                                                       "permissions", "ok.md": "fine",
                                          "loop.md": BROKEN_LINK, ".hidden_loop": BROKEN_LINK}
    # globs that want files only deeper in the folder, or of an extension no parser names, still
    # want it: its documents would read as deleted (both swept nothing but a deletion before)
    assert "private cannot be listed" in result["nested_glob"] and "private cannot be listed" in result["yaml_only"]
    assert result["other_folder"] == {}  # nothing under private/ can be wanted: skipped
    # The source's own folder: no exclude to suggest (exclude: ['**'] would exclude everything).
    assert "cannot be listed (Permission denied)" in result["root"] and "exclude" not in result["root"]


GLOB = st.text(alphabet="ab/.*?[]!", max_size=8)
NAME = st.text(alphabet="ab/.", max_size=6)


@given(include=st.lists(GLOB, min_size=1, max_size=2), exclude=st.lists(GLOB, max_size=2), folder=NAME, rest=NAME)
@settings(max_examples=400, deadline=None)
def test_a_folder_is_passed_over_only_when_nothing_under_it_is_wanted(include, exclude, folder, rest):
    """Soundness of skipping an unlistable folder: a file under it that the globs want means the
    folder is never judged unwanted (else its documents would read as deleted)."""
    prefix = folder.strip("/") + "/"
    if matches(prefix + rest, tuple(include), tuple(exclude)):
        assert _folder_filter(tuple(include), tuple(exclude))(prefix)
