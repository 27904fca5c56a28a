"""A real PostgreSQL server for tests (Debian `postgresql`): initdb + pg_ctl on a free 127.0.0.1
port under a temp folder, started and stopped by the test. PostgreSQL refuses to run as root, so
as root the server runs as the `postgres` system user the Debian package creates."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from tests.support.seaweed import free_ports


def pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise RuntimeError(f"{name} not found: run .ci/system_deps.sh (apt-get install postgresql)")
    return found


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


@contextmanager
def postgres_server(password: str, db_name: str = "dagster", timeout_s: int = 60):
    """Yield the DAGSTER_PG_* variables of a running server with database ``db_name`` (user
    ``dagster``, password authentication over TCP); the server and its folder go when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="rag-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    (port,) = free_ports(1)
    pwfile = folder / "pw"
    pwfile.write_text(password)
    if os.geteuid() == 0:
        os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
    run = lambda args: subprocess.run(_as_server_user(args), check=True, capture_output=True, text=True,  # noqa: E731
                                      timeout=timeout_s)
    try:
        run([pg_bin("initdb"), "-D", str(data), "-U", "dagster", "--auth=scram-sha-256", f"--pwfile={pwfile}",
             "-E", "UTF8", "--no-sync"])
        run([pg_bin("pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-w", "-t", str(timeout_s),
             "-o", f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder} "
                   "-c fsync=off -c max_connections=200", "start"])
        env = {**os.environ, "PGPASSWORD": password}
        subprocess.run([pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "dagster", db_name],
                       check=True, capture_output=True, env=env, timeout=timeout_s)
        yield {"DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(port), "DAGSTER_PG_USER": "dagster",
               "DAGSTER_PG_PASSWORD": password, "DAGSTER_PG_DB": db_name}
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_server_user([pg_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                           capture_output=True, timeout=timeout_s)
        shutil.rmtree(folder, ignore_errors=True)
