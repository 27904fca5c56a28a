"""Progress of long `rag` steps: a bar redrawn in place on a terminal, sparse lines elsewhere."""

import io
import re

from rag_assets.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_bar_redraws_one_line_and_ends_full():
    out = Terminal()
    bar = Progress(out, "[sample] batches", 4)
    for step in range(1, 5):
        bar.start(step, f"doc {step}")
    bar.finish()
    frames = out.getvalue().split("\r")[1:]
    assert out.getvalue().count("\n") == 1 and out.getvalue().endswith("\n")
    assert [re.search(r"\] (\d+/4)", f).group(1) for f in frames] == ["0/4", "1/4", "2/4", "3/4", "4/4"]
    assert "doc 3" in frames[2] and frames[-1].count("#") == 24
    # A shorter frame pads over the longer one before it.
    assert all(len(b) >= len(a.rstrip()) for a, b in zip(frames, frames[1:]))


def test_log_output_prints_the_first_and_every_nth_step_only():
    out = io.StringIO()
    bar = Progress(out, "[eval] default: questions", 120, every=50)
    for step in range(1, 121):
        bar.start(step)
    bar.finish()
    assert out.getvalue().splitlines() == ["[eval] default: questions 1/120", "[eval] default: questions 50/120",
                                           "[eval] default: questions 100/120"]


def test_no_stream_prints_nothing():
    bar = Progress(None, "x", 3)
    bar.start(1)
    bar.finish()  # --json: stdout stays one JSON document, stderr stays empty
