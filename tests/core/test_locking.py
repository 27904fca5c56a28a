"""One ingest at a time per corpus, and one creator per table, across processes; a dead holder never
leaves the lock behind."""

import os
import subprocess
import sys
import time

import pytest

from rag_assets.core.locking import IngestLocked, ingest_lock, table_creation_lock

HOLDER = """
import sys, time
from rag_assets.core.locking import ingest_lock
with ingest_lock(sys.argv[1], "sample"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold(folder, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(seconds)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_ingest_is_refused_with_the_holders_pid_until_the_holder_is_killed(tmp_path):
    holder = hold(tmp_path, 60)
    try:
        started = time.monotonic()
        with pytest.raises(IngestLocked) as info:
            with ingest_lock(tmp_path, "sample", wait_seconds=0.5):
                pass
        assert 0.5 <= time.monotonic() - started < 10  # waited its 0.5 s, not for the holder's 60 s
        assert f"corpus 'sample' is being ingested by process {holder.pid} (lock {tmp_path}/.ingest.lock)" \
            in str(info.value)
    finally:
        holder.kill()  # SIGKILL: no cleanup code runs in the holder
        holder.wait()
    with ingest_lock(tmp_path, "sample") as path:
        assert path.read_text().strip() == str(os.getpid())


def test_waiting_ingest_says_whom_it_waits_for_and_gets_the_lock_when_the_holder_finishes(tmp_path):
    holder = hold(tmp_path, 0.5)
    told = []
    with ingest_lock(tmp_path, "sample", wait_seconds=10, on_wait=told.append):
        assert holder.poll() == 0 or holder.wait(5) == 0
    holder.wait()
    assert told == [str(holder.pid)]
    with ingest_lock(tmp_path, "sample", wait_seconds=10, on_wait=told.append):
        assert told == [str(holder.pid)]  # a free lock is taken without waiting


def test_one_process_at_a_time_creates_a_local_table_and_an_object_store_is_left_alone(tmp_path):
    # Two creators of one table both commit (the later as an Overwrite that empties it): the lock
    # makes the second wait, and then find the table there.
    with table_creation_lock(str(tmp_path), "t"):
        with pytest.raises(TimeoutError, match="creating table 't'"):
            with table_creation_lock(f"file://{tmp_path}", "t", wait_seconds=0.2):
                pass
        with table_creation_lock(str(tmp_path), "other", wait_seconds=0.2):
            pass  # another table's creation is not held up
    with table_creation_lock(str(tmp_path), "t", wait_seconds=0.2):
        pass  # released with the block
    with table_creation_lock("s3://bucket/index", "t", wait_seconds=0.2):
        with table_creation_lock("s3://bucket/index", "t", wait_seconds=0.2):
            pass  # no file lock on an object store
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.create.lock", ".t.create.lock"]


def test_a_table_s_creation_makes_its_folder_again_when_a_reader_removed_it(tmp_path, monkeypatch):
    """A read-only connect removes the database folder it found missing: a writer that had just made
    it failed opening its lock there (FileNotFoundError)."""
    folder, made = tmp_path / "db", []
    real_open = os.open

    def open_after_a_reader(path, *args):
        if not made:  # the reader's rmdir lands between the writer's mkdir and its open
            made.append(path)
            os.rmdir(folder)
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", open_after_a_reader)
    with table_creation_lock(str(folder), "t"):
        assert (folder / ".t.create.lock").exists() and len(made) == 1
