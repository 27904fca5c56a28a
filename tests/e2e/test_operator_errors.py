"""Failures of the setup, not of a document: one line naming the path and the fix, the README's
exit code, and the traceback only with --debug."""

import errno

import pytest

from rag_assets.cli import main, operator_error
from rag_assets.core.index import IndexUnreadable
from rag_assets.core.locking import IngestLocked
from rag_assets.core.planning import MassDeleteRefused
from tests.conftest import env, make_project


def test_missing_source_folder_is_one_line_and_exit_2_and_debug_shows_the_traceback(tmp_path, capsys):
    values = {**make_project(tmp_path, docs=tmp_path / "gone"), "DAGSTER_HOME": str(tmp_path / ".dagster_home")}
    with env(**values):
        assert main(["ingest"]) == 2
        err = capsys.readouterr().err
        assert err == (f"rag: source folder {tmp_path / 'gone'} does not exist; fix the source's 'path' in "
                       "sources.yml (or the environment variable it reads, e.g. RAG_SAMPLE_DOCS)\n")
        with pytest.raises(FileNotFoundError):
            main(["--debug", "ingest"])


LANCE_ENOSPC = ("lance error: LanceError(IO): Generic LocalFileSystem error: Unable to copy file from "
                "/data/lancedb/sample__m.lance/data/.tmp_1.lance: No space left on device (os error 28), "
                "/home/build/lance/rust/lance-io/src/local.rs:104:31")


def chained(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as cause:
            raise outer from cause
    except Exception as raised:
        return raised


@pytest.mark.parametrize("exc, path", [
    (RuntimeError(LANCE_ENOSPC), "/data/lancedb/sample__m.lance/data/.tmp_1.lance"),
    (OSError(errno.ENOSPC, "No space left on device", "/data/stages/raw/ab/x.bin"), "/data/stages/raw/ab/x.bin"),
    (chained(ValueError("run failed"), OSError(errno.ENOSPC, "No space left on device")), None),
    (chained(IndexUnreadable("cannot read the LanceDB table"), RuntimeError(LANCE_ENOSPC)),
     "/data/lancedb/sample__m.lance/data/.tmp_1.lance"),
])
def test_disk_full_is_one_line_naming_the_path_and_the_fix(exc, path):
    message, code = operator_error(exc, "/nonexistent/project")
    assert code == 1 and "\n" not in message
    assert message.startswith("no space left on device" + (f" writing {path}" if path else " (under"))
    assert "free space there or move it to a larger disk, then run `rag ingest` again" in message
    assert "rag_project.yml data_dir" in message  # where it writes, when the config cannot be read


def test_exit_codes_follow_the_readme():
    assert operator_error(MassDeleteRefused("refusing to delete 120 of the 120 documents"))[1] == 2
    assert operator_error(IngestLocked("corpus 'sample' is being ingested by process 42"))[1] == 1
    message, code = operator_error(ZeroDivisionError("division by zero\nsecond line"))
    assert (message, code) == ("ZeroDivisionError: division by zero (run `rag --debug ...` for the traceback)", 1)
