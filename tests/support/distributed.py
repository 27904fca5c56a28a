"""Servers and workers of the distributed tests: a Debian redis-server on a free loopback port and
`dagster-celery worker start` processes (the README's command)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO
from tests.support.seaweed import free_ports, stop

BIN = Path(sys.executable).parent


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(data_dir: Path, timeout_s: float = 20.0):
    """Yield the URL of a Debian redis-server on a free 127.0.0.1 port, without persistence."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found: run .ci/system_deps.sh (apt-get install redis-server)")
    (port,) = free_ports(1)
    data_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(data_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while not _pong(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer PING on port {port}")
            time.sleep(0.2)
        yield f"redis://127.0.0.1:{port}"
    finally:
        stop(proc)


@contextmanager
def celery_workers(workers: dict[str, tuple[dict[str, str], Path]], log_dir: Path, timeout_s: float = 90.0):
    """Start one `dagster-celery worker start` (the README's command) per name, with its own
    environment and working directory (``workers``: name -> (env, cwd)), and wait until each logs
    that it is ready; stop them all when the block ends."""
    procs = {}
    names = list(workers)
    try:
        for name, (worker_env, cwd) in workers.items():
            log = (log_dir / f"{name}.log").open("wb")
            procs[name] = subprocess.Popen(
                [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
                 "-y", str(REPO / "dbt_like_configs" / "celery_worker.yaml"), "-n", name, "-i", "rag_assets.defs.factory",
                 "--", "--pool=solo", "--without-gossip", "--without-mingle"],
                stdout=log, stderr=subprocess.STDOUT, env=worker_env, cwd=cwd, start_new_session=True)
            log.close()
        deadline = time.monotonic() + timeout_s
        waiting = set(names)
        while waiting:
            for name in list(waiting):
                text = (log_dir / f"{name}.log").read_text(errors="replace")
                if f"{name}@" in text and " ready." in text:
                    waiting.discard(name)
                elif procs[name].poll() is not None:
                    raise RuntimeError(f"celery worker {name} exited: {text[-3000:]}")
            if waiting and time.monotonic() > deadline:
                raise RuntimeError(f"celery workers {sorted(waiting)} not ready after {timeout_s}s")
            time.sleep(0.3)
        yield
    finally:
        for proc in procs.values():
            stop(proc)
