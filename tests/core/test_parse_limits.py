"""Bounded parsing: a hostile document fails alone, fast, naming the limit and its setting."""

import concurrent.futures
import fcntl
import os
import subprocess
import sys
import time
import types

import pytest

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError, ParseLimitExceeded, ParseLimits, parse_document
from rag_assets.core.parsing import pdf
from rag_assets.core.parsing.limits import ParserFailed, report_ocr_page, report_pages, run_bounded
from rag_assets.core.pipeline import parse_stage, snapshot_raw
from rag_assets.core.store import StageStore
from tests.support.bad_inputs import expanding_docx, slide_deck
from tests.support.make_sample_binaries import write_pdf


def raw(doc_id: str, data: bytes) -> RawDocument:
    return RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data)


def test_docx_that_unzips_to_60_mb_fails_before_any_parser_reads_it():
    data = expanding_docx(60)
    assert len(data) < 1 * 2**20
    started = time.monotonic()
    with pytest.raises(DocumentError) as info:
        parse_document(raw("bomb.docx", data))
    assert time.monotonic() - started < 2
    assert "word/document.xml" in info.value.cause and "max_expanded_mb of 32" in info.value.cause


def test_expanded_size_limit_is_a_setting():
    data = expanding_docx(0.02)  # plus about 1 MB of styles and theme from python-docx's template
    with pytest.raises(DocumentError, match="max_expanded_mb of 0.5"):
        parse_document(raw("a.docx", data), ParseLimits(max_expanded_mb=0.5))
    assert parse_document(raw("a.docx", data), ParseLimits(max_expanded_mb=2)).elements


def test_slow_rich_parse_is_stopped_at_max_seconds():
    data = expanding_docx(8)  # unstructured needs more than 2 minutes for these paragraphs
    started = time.monotonic()
    with pytest.raises(DocumentError, match="longer than the source's max_parse_seconds of 1 s"):
        parse_document(raw("slow.docx", data), ParseLimits(max_seconds=1, max_expanded_mb=64))
    assert time.monotonic() - started < 10  # ~1 s on a quiet machine; the margin is for a loaded CI runner


def test_memory_cap_stops_the_parser_and_says_so():
    # Without the expanded-size check, lxml's allocations fail at the cap: reported as memory, not XML.
    with pytest.raises(DocumentError, match="needed more than the source's max_parse_memory_mb of 256"):
        parse_document(raw("bomb.docx", expanding_docx(60)), ParseLimits(max_expanded_mb=1000, max_memory_mb=256))


def test_element_count_and_text_length_limits():
    text = "".join(f"Paragraph {i}.\n\n" for i in range(50)).encode()
    with pytest.raises(DocumentError, match="50 elements, over the source's max_elements of 10"):
        parse_document(raw("many.txt", text), ParseLimits(max_elements=10))
    with pytest.raises(DocumentError, match="max_text_mb"):
        parse_document(raw("long.txt", text), ParseLimits(max_text_mb=0.0001))
    with pytest.raises(DocumentError, match="max_elements of 10"):  # checked in the child for rich formats
        parse_document(raw("many.docx", expanding_docx(0.01)), ParseLimits(max_elements=10))


def _sleep(seconds):
    time.sleep(seconds)
    return "woke"


def _allocate(megabytes):
    return len(bytearray(megabytes * 2**20))


def _raise():
    raise KeyError("no such part")


def test_run_bounded_returns_the_value_and_bounds_time_and_memory():
    assert run_bounded(_sleep, (0,), ParseLimits()) == "woke"
    with pytest.raises(ParseLimitExceeded, match="max_parse_seconds of 0.5"):
        run_bounded(_sleep, (30,), ParseLimits(max_seconds=0.5))
    assert run_bounded(_allocate, (50,), ParseLimits(max_memory_mb=200)) == 50 * 2**20
    with pytest.raises(ParseLimitExceeded, match="max_parse_memory_mb of 200"):
        run_bounded(_allocate, (1000,), ParseLimits(max_memory_mb=200))
    with pytest.raises(ParserFailed, match="KeyError: 'no such part'"):
        run_bounded(_raise, (), ParseLimits())


def _pages(count, seconds_each):
    report_pages(0, count)
    for page in range(1, count + 1):
        time.sleep(seconds_each)
        report_pages(page, count)
    return count


def test_a_paged_parse_may_take_its_per_page_allowance_but_no_page_longer_than_max_seconds():
    # 3.2 s in all, past max_seconds and past the worker's own alarm (max_seconds + 2), 0.4 s a page
    assert run_bounded(_pages, (8, 0.4), ParseLimits(max_seconds=1, max_seconds_per_page=1)) == 8
    with pytest.raises(ParseLimitExceeded, match="parsing its 20 pages took longer than the 2 s the source's "
                                                 "max_parse_seconds_per_page of 0.1 s allows them"):
        run_bounded(_pages, (20, 0.2), ParseLimits(max_seconds=0.5, max_seconds_per_page=0.1))
    # 2 s: time for the child to report its first page on a loaded machine (at 0.5 s a busy CI run stopped it first)
    with pytest.raises(ParseLimitExceeded, match="stopped after page 0 of 100: the next step took longer than the "
                                                 "source's max_parse_seconds of 2 s"):
        run_bounded(_pages, (100, 30), ParseLimits(max_seconds=2, max_seconds_per_page=1))
    with pytest.raises(ParseLimitExceeded, match="longer than the source's max_parse_seconds of 1 s"):
        run_bounded(_pages, (2, 0.8), ParseLimits(max_seconds=1))  # few pages: max_seconds bounds them all


def _scans(count, seconds_each):
    report_pages(0, count)
    for page in range(1, count + 1):
        report_ocr_page()
        time.sleep(seconds_each)
        report_pages(page, count)
    return count


def test_pages_read_by_ocr_are_allowed_max_seconds_per_ocr_page_more():
    # 8 scanned pages of 0.4 s: 3.2 s in all, allowed 8 x (0.01 + 1) s; the text pages' allowance
    # alone (0.08 s) would stop them at max_seconds
    assert run_bounded(_scans, (8, 0.4), ParseLimits(max_seconds=1, max_seconds_per_page=0.01,
                                                     max_seconds_per_ocr_page=1)) == 8
    # the OCR'd pages so far count (a page is known to need OCR only once it is reached)
    with pytest.raises(ParseLimitExceeded, match=r"parsing its 20 pages, \d of them by OCR, took longer than the 1 s "
                                                 r"the source's max_parse_seconds_per_page of 0.05 s and "
                                                 r"max_parse_seconds_per_ocr_page of 0.05 s allow them and was stopped "
                                                 r"after \d pages; raise max_parse_seconds_per_ocr_page"):
        run_bounded(_scans, (20, 0.2), ParseLimits(max_seconds=0.5, max_seconds_per_page=0.05,
                                                   max_seconds_per_ocr_page=0.05))


def _documents(sizes, seconds_each):
    return sum(_pages(pages, seconds_each) for pages in sizes)


def test_paged_documents_of_one_parse_share_their_pages_allowance():
    # an e-mail with three 8-page PDFs: 24 pages allow 4.8 s (2.4 s used: room for a loaded machine);
    # each one alone would allow 1.6 s, which the third overruns (2.4 s into the parse)
    assert run_bounded(_documents, ((8, 8, 8), 0.1), ParseLimits(max_seconds=1, max_seconds_per_page=0.2)) == 24
    with pytest.raises(ParseLimitExceeded, match="parsing its 22 pages took longer than the 2 s"):
        run_bounded(_documents, ((2, 20), 0.15), ParseLimits(max_seconds=1, max_seconds_per_page=0.1))


def _long_pdf(tmp_path, count: int) -> bytes:
    path = tmp_path / "long.pdf"
    write_pdf(path, [[f"Chapter {n}", "", f"Dock {n} charges the robot in {n % 90 + 10} minutes."]
                     for n in range(1, count + 1)])
    return path.read_bytes()


def test_a_pdf_reports_each_page_and_a_long_one_parses_past_max_seconds(tmp_path, monkeypatch):
    data = _long_pdf(tmp_path, 600)
    reported = []
    monkeypatch.setattr(pdf, "report_pages", lambda done, total: reported.append((done, total)))
    started = time.monotonic()
    assert pdf.parse_pdf(data)[0].count("Dock ") == 600
    assert time.monotonic() - started > 1.0  # ~6 ms a page here: 3.6 s in all, well past max_seconds below
    assert reported == [(page, 600) for page in range(601)]
    monkeypatch.undo()
    # max_seconds still bounds each page: 1 s, so that a loaded machine's pause is no failure (0.3 s was)
    doc = parse_document(raw("long.pdf", data), ParseLimits(max_seconds=1.0, max_seconds_per_page=0.2))
    assert {e.page for e in doc.elements} == set(range(1, 601))


def test_no_child_outlives_a_timeout():
    before = _children()
    with pytest.raises(ParseLimitExceeded):
        run_bounded(_sleep, (30,), ParseLimits(max_seconds=0.2))
    assert _children() <= before  # the worker that timed out is gone, reaped


def _run_program(pid_file):
    program = subprocess.Popen(["sleep", "60"])
    with open(pid_file, "w") as out:
        out.write(str(program.pid))
    program.wait()


def test_a_program_the_worker_runs_is_killed_with_it(tmp_path):
    pid_file = tmp_path / "program.pid"
    with pytest.raises(ParseLimitExceeded):
        run_bounded(_run_program, (str(pid_file),), ParseLimits(max_seconds=0.5))
    pid = pid_file.read_text()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)  # pandoc, converting a hostile file, would run on otherwise


def _alive(pid: str) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_one_worker_parses_call_after_call_and_a_failure_retires_it():
    first, second = run_bounded(os.getpid, (), ParseLimits()), run_bounded(os.getpid, (), ParseLimits())
    assert first == second != os.getpid()
    with pytest.raises(ParserFailed):
        run_bounded(_raise, (), ParseLimits())
    assert str(first) not in _children()
    assert run_bounded(os.getpid, (), ParseLimits()) not in (first, os.getpid())


def test_modules_loaded_since_the_fork_make_a_new_worker(monkeypatch):
    first = run_bounded(os.getpid, (), ParseLimits())
    monkeypatch.setitem(sys.modules, "rag_test_parser_plugin", types.ModuleType("rag_test_parser_plugin"))
    assert run_bounded(os.getpid, (), ParseLimits()) != first
    assert str(first) not in _children()


def test_a_call_while_another_thread_parses_gets_a_worker_of_its_own():
    busy = concurrent.futures.ThreadPoolExecutor(1).submit(run_bounded, _sleep_pid, (1.0,), ParseLimits())
    time.sleep(0.3)
    alone = run_bounded(os.getpid, (), ParseLimits())
    shared = busy.result(timeout=30)
    assert alone != shared and str(alone) not in _children()  # used once, then reaped
    assert run_bounded(os.getpid, (), ParseLimits()) == shared


def test_the_worker_holds_none_of_the_parents_files(tmp_path):
    """A lock the parent held while the worker was forked is free once the parent lets it go
    (the corpus' ingest lock is such a file)."""
    lock_path = tmp_path / "ingest.lock"
    held = os.open(lock_path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    with pytest.raises(ParserFailed):
        run_bounded(_raise, (), ParseLimits())  # retire any worker forked before the lock was taken
    worker = run_bounded(os.getpid, (), ParseLimits())
    os.close(held)
    again = os.open(lock_path, os.O_RDWR)
    try:
        fcntl.flock(again, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(again)
    assert str(worker) in _children()  # the worker lives on, without the lock


def _sleep_pid(seconds):
    time.sleep(seconds)
    return os.getpid()


def _children() -> set[str]:
    own = str(os.getpid())
    found = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == own:
                found.add(pid)
    return found


def test_hostile_document_fails_alone_in_its_batch(tmp_path):
    store = StageStore(tmp_path)
    docs = {"bomb.docx": expanding_docx(60), "fine.docx": expanding_docx(0.01), "note.md": b"# Note\n\nHello.\n"}
    for doc_id, data in docs.items():
        snapshot_raw(store, raw(doc_id, data))
    results = {d: parse_stage(store, d, limits=ParseLimits()) for d in docs}
    assert {d: r.status for d, r in results.items()} == {"bomb.docx": "failed", "fine.docx": "computed",
                                                         "note.md": "computed"}
    assert "max_expanded_mb" in results["bomb.docx"].error
    assert store.current("parsed", "bomb.docx")["error"].startswith("bomb.docx: archive expands to")


def test_a_document_over_a_limit_is_planned_again_once_the_limit_changes(tmp_path):
    from rag_assets.core.planning import plan_sweep
    from rag_assets.core.sources import DocumentRef

    store = StageStore(tmp_path)
    document = raw("many.txt", "".join(f"Paragraph {i}.\n\n" for i in range(50)).encode())
    snapshot_raw(store, document)
    strict = ParseLimits(max_elements=10)
    assert parse_stage(store, "many.txt", limits=strict).status == "failed"
    store.set_current("index", "many.txt", key=None, error="failed", content_hash=document.content_hash,
                      profile_hash="p", model="m")  # what the later stages record for a failed parse
    ref = DocumentRef("many.txt", document.uri, document.size, document.source_version)

    def work(limits):
        return plan_sweep([ref], lambda d: document, store, ["many.txt"], "p", "m", limits=limits).work

    assert work(strict) == []  # not retried on every sweep
    assert work(ParseLimits(max_elements=1000)) == ["many.txt"]
    assert parse_stage(store, "many.txt", limits=ParseLimits(max_elements=1000)).status == "computed"


def test_a_document_read_as_another_type_is_planned_again_once_its_format_is_supported(tmp_path):
    from rag_assets.core.planning import plan_sweep
    from rag_assets.core.sources import DocumentRef

    store = StageStore(tmp_path)
    document = raw("deck.pptx", slide_deck())
    snapshot_raw(store, document)
    ref = DocumentRef("deck.pptx", document.uri, document.size, document.source_version)

    def fail(**recorded):  # the parse's failure, and what the later stages record for it
        store.set_current("parsed", "deck.pptx", key=None, error="deck.pptx: binary", content_hash=document.content_hash,
                          **recorded)
        store.set_current("index", "deck.pptx", key=None, error="failed", content_hash=document.content_hash,
                          profile_hash="p", model="m")

    def work():
        return plan_sweep([ref], lambda d: document, store, ["deck.pptx"], "p", "m", limits=ParseLimits()).work

    fail(parsed_as="pptx")
    assert work() == []  # failed as what its name means: not retried on every sweep
    fail(parsed_as="text")  # read as text before PPTX was supported
    assert work() == ["deck.pptx"]
    fail()  # recorded before failures named their type: retried once
    assert work() == ["deck.pptx"]
    assert parse_stage(store, "deck.pptx", limits=ParseLimits()).status == "computed"
    snapshot_raw(store, raw("cut.pptx", slide_deck()[:500]))
    assert parse_stage(store, "cut.pptx", limits=ParseLimits()).status == "failed"
    assert store.current("parsed", "cut.pptx")["parsed_as"] == "pptx"  # what the next sweep compares


FORK_BESIDE_LANCEDB = """
import sys, lancedb, pyarrow as pa
from rag_assets.core.parsing.limits import ParseLimits, run_bounded
lancedb.connect(sys.argv[1]).create_table("t", schema=pa.schema([pa.field("a", pa.int64())]))  # its runtime runs
print(run_bounded(len, ("abc",), ParseLimits()))
"""


THREAD_RESTARTED_IN_THE_WORKER = """
import os, selectors, threading, time
from rag_assets.core.parsing.limits import ParseLimits, run_bounded

def restart():  # as LanceDB restarts its event loop thread in a forked child
    selector = selectors.DefaultSelector()
    def loop():
        time.sleep(0.3)  # by now the worker has closed the files it inherited, the selector's too
        selector.select(1)
    threading.Thread(target=loop, daemon=True).start()

os.register_at_fork(after_in_child=restart)
print(run_bounded(time.sleep, (1,), ParseLimits()))
"""


def test_a_thread_restarted_in_the_worker_fails_there_without_a_word():
    out = subprocess.run([sys.executable, "-c", THREAD_RESTARTED_IN_THE_WORKER], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "None" and out.stderr == ""  # was: "Exception in thread ...: Bad file descriptor"


def test_forking_beside_lancedb_prints_no_warning_to_the_operator(tmp_path):
    # In a plain interpreter: pytest would record the child's warnings instead of printing them.
    out = subprocess.run([sys.executable, "-c", FORK_BESIDE_LANCEDB, str(tmp_path)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "3" and out.stderr == ""
