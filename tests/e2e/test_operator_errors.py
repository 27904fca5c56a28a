"""Failures of the setup, not of a document: one line naming the path and the fix, the README's
exit code, and the traceback only with --debug."""

import errno
import json
import shutil
from pathlib import Path

import pytest

from rag_assets.cli import main, operator_error
from rag_assets.core.errors import UsageError
from rag_assets.core.index import IndexUnreadable
from rag_assets.core.locking import IngestLocked
from rag_assets.core.planning import MassDeleteRefused
from rag_assets.core.sources import SourceFolderUnreadable, SourceUnavailable
from tests.conftest import env, make_project


def test_missing_source_folder_is_one_line_and_exit_2_and_debug_shows_the_traceback(tmp_path, capsys):
    values = {**make_project(tmp_path, docs=tmp_path / "gone"), "DAGSTER_HOME": str(tmp_path / ".dagster_home")}
    with env(**values):
        assert main(["ingest"]) == 2
        err = capsys.readouterr().err
        assert err == (f"rag: source folder {tmp_path / 'gone'} (from $RAG_SAMPLE_DOCS) does not exist; fix the "
                       "source's 'path' in sources.yml or the environment variable it reads\n")
        with pytest.raises(FileNotFoundError):
            main(["--debug", "ingest"])


def test_a_source_path_naming_a_file_says_so(tmp_path, capsys):
    (tmp_path / "docs.md").write_text("# Not a folder\n")
    values = {**make_project(tmp_path, docs=tmp_path / "docs.md"), "DAGSTER_HOME": str(tmp_path / ".dagster_home")}
    with env(**values):
        assert main(["ingest"]) == 2
        assert f"source folder {tmp_path / 'docs.md'} (from $RAG_SAMPLE_DOCS) is a file, not a folder; fix" \
            in capsys.readouterr().err


# What lancedb 0.40 raised writing to a full 200 kB tmpfs (the path is lance's own source file).
LANCE_ENOSPC = ("lance error: LanceError(IO): Generic LocalFileSystem error: Unable to copy data to file: No space "
                "left on device (os error 28), /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/"
                "lance-table-13.0.0/src/io/commit.rs:1663:50")


def chained(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as cause:
            raise outer from cause
    except Exception as raised:
        return raised


@pytest.mark.parametrize("exc, path", [
    (RuntimeError(LANCE_ENOSPC), None),
    (OSError(errno.ENOSPC, "No space left on device", "/data/stages/raw/ab/x.bin"), "/data/stages/raw/ab/x.bin"),
    (chained(ValueError("run failed"), OSError(errno.ENOSPC, "No space left on device")), None),
    (chained(IndexUnreadable("cannot read the LanceDB table"), RuntimeError(LANCE_ENOSPC)), None),
])
def test_disk_full_is_one_line_naming_the_path_and_the_fix(exc, path):
    message, code = operator_error(exc, "/nonexistent/project")
    assert code == 1 and "\n" not in message
    assert message.startswith("no space left on device" + (f" writing {path}" if path else " (under"))
    assert "free space there or move it to a larger disk, then run `rag ingest` again" in message
    assert "rag_project.yml data_dir" in message  # where it writes, when the config cannot be read
    assert ".cargo" not in message


def test_exit_codes_follow_the_readme():
    assert operator_error(MassDeleteRefused("refusing to delete 120 of the 120 documents"))[1] == 2
    assert operator_error(IngestLocked("corpus 'sample' is being ingested by process 42"))[1] == 1
    # A source folder that cannot be listed is unreadable input, fixed where it is (--help: 2); a server
    # that does not answer may answer the next sweep (1).
    assert operator_error(SourceFolderUnreadable("source folder /docs cannot be listed"))[1] == 2
    assert operator_error(SourceUnavailable("S3 source 'docs' (s3://b/) cannot list objects"))[1] == 1
    assert operator_error(UsageError("no corpus 'x'; declared: ['sample']")) == ("no corpus 'x'; declared: ['sample']", 2)
    assert operator_error(KeyError("vector"))[1] == 1  # an internal bug, not the user's mistake
    message, code = operator_error(ZeroDivisionError("division by zero\nsecond line"))
    assert (message, code) == ("ZeroDivisionError: division by zero (run `rag --debug ...` for the traceback)", 1)


def test_a_lance_error_that_is_no_damage_keeps_its_own_words():
    conflict = RuntimeError("lance error: Commit conflict for version 7: retry, /rustc/2d81/library/core/src/ops/"
                            "function.rs:250:5")
    assert operator_error(conflict, "/nonexistent/project") == (
        "RuntimeError: lance error: Commit conflict for version 7: retry (run `rag --debug ...` for the traceback)", 1)


def test_a_query_holding_bytes_that_are_not_utf8_is_a_usage_error(tmp_path, capsys):
    values = {**make_project(tmp_path), "DAGSTER_HOME": str(tmp_path / ".dagster_home")}
    with env(**values):
        assert main(["query", "caf\udce9 refund"]) == 2  # b"caf\xe9" as Python decodes argv
        assert "not UTF-8" in capsys.readouterr().err


def test_a_damaged_table_a_query_reads_is_named_with_the_fix_that_works(tmp_path, capsys):
    values = {**make_project(tmp_path), "DAGSTER_HOME": str(tmp_path / ".dagster_home")}
    with env(**values):
        assert main(["ingest"]) == 0
        lance = next(Path(values["RAG_LANCEDB_URI"]).glob("sample__*__default.lance"))
        for data in (lance / "data").glob("*.lance"):
            data.write_bytes(b"\x00" * 100)  # cut short: lance reads past the end
        capsys.readouterr()
        assert main(["query", "vacation days"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"rag: cannot read the LanceDB table {lance} (lance error") and "\n" not in err.rstrip()
        assert f"mv {lance} {lance}.damaged" in err and ".rs:" not in err
        # `rag tables` reads each table through: the serving one is damaged (its manifest still counts its rows)
        assert main(["tables", "--json"]) == 0
        listed = {t["table"]: t for t in json.loads(capsys.readouterr().out)}
        assert listed[lance.name[:-len(".lance")]]["damaged"] and listed[lance.name[:-len(".lance")]]["role"] == "serving"
        assert not any(t["damaged"] for name, t in listed.items() if name != lance.name[:-len(".lance")])
        assert main(["tables"]) == 0
        assert f"(mv {lance} {lance}.damaged)" in capsys.readouterr().out
        lance.rename(f"{lance}.damaged")  # the advice, followed
        assert main(["ingest"]) == 0
        for index in (lance / "_indices").iterdir():  # a search index lost: the data reads, the query does not
            shutil.rmtree(index)
        capsys.readouterr()
        assert main(["query", "vacation days"]) == 1  # the table is named from lance's own message
        assert capsys.readouterr().err.startswith(f"rag: cannot read the LanceDB table {lance} (lance error")
        assert main(["tables", "--json"]) == 0  # each index is asked a query too: it was listed as serving
        assert {t["table"]: t["damaged"] for t in json.loads(capsys.readouterr().out)}[lance.name[:-len(".lance")]]
        lance.rename(f"{lance}.damaged2")
        assert main(["ingest"]) == 0 and main(["query", "vacation days"]) == 0
        assert "27 days" in capsys.readouterr().out
