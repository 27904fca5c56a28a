"""Headless Debian Chromium driven over the DevTools protocol, for tests of the Dagster UI.

The UI is a React app: what a user sees exists only after its scripts have fetched data and
rendered, so tests read the rendered DOM (``document.body.innerText``) by polling, with a bound,
and take screenshots with ``Page.captureScreenshot``. Loopback only; no downloads.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect

from tests.support.seaweed import stop

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--hide-scrollbars", "--mute-audio"]


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """One headless browser with one page; use as a context manager."""

    def __init__(self, user_data_dir: Path, width: int = 1600, height: int = 1000, start_timeout: float = 30.0):
        self.user_data_dir = Path(user_data_dir)
        self.width, self.height, self.start_timeout = width, height, start_timeout
        self._ids = itertools.count(1)

    def __enter__(self) -> "Chromium":
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("chromium is not installed: run `make system-deps` (.ci/system_deps.sh)")
        self.user_data_dir.mkdir(parents=True, exist_ok=True)
        self._log = open(self.user_data_dir / "chromium.log", "wb")
        self.proc = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.user_data_dir}", f"--window-size={self.width},{self.height}", "about:blank"],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._ws = connect(self._page_socket(), max_size=None, open_timeout=10)
            self.send("Page.enable")
            self.viewport(self.width, self.height)
        except BaseException:
            self._stop()
            raise
        return self

    def _page_socket(self) -> str:
        """The page target's websocket, once Chromium has written its DevTools port."""
        port_file = self.user_data_dir / "DevToolsActivePort"
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}; see {self._log.name}")
            if port_file.exists() and port_file.read_text().strip():
                port = port_file.read_text().split()[0]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as resp:
                    pages = [t for t in json.load(resp) if t["type"] == "page"]
                if pages:
                    return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.1)
        raise TimeoutError(f"chromium opened no DevTools port within {self.start_timeout}s; see {self._log.name}")

    def send(self, method: str, timeout: float = 30.0, **params) -> dict:
        """Send one DevTools command and return its result (events in between are skipped)."""
        call_id = next(self._ids)
        self._ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def viewport(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def wait_for(self, expression: str, timeout: float = 30.0):
        """The value of a JavaScript expression once it is truthy; TimeoutError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression[:120]} stayed falsy for {timeout}s")
            time.sleep(0.25)

    def wait_for_text(self, *needles: str, timeout: float = 30.0) -> str:
        """The page's rendered text once it contains every needle; AssertionError naming the
        missing ones (and what was rendered) after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            missing = [n for n in needles if n not in text]
            if not missing:
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"not rendered within {timeout}s: {missing}; page text: {text[:2000]!r}")
            time.sleep(0.25)

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def _stop(self) -> None:
        stop(self.proc, timeout=10)
        self._log.close()

    def __exit__(self, *exc) -> None:
        try:
            self._ws.close()
        finally:
            self._stop()
