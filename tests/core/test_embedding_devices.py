"""The local embedder's device choice and batching (the GPU path's logic, checked on the CPU)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_assets.core.embedding import CPU, CPU_BATCH_TOKENS, CUDA, CUDA_BATCH_TOKENS, LocalMiniLMEmbedder, choose_providers, length_batches


def test_providers_follow_the_device_setting():
    assert choose_providers("auto", [CUDA, CPU]) == [CUDA, CPU]
    assert choose_providers("cuda", [CPU, CUDA]) == [CUDA, CPU]
    assert choose_providers("auto", [CPU]) == [CPU]
    assert choose_providers("cpu", [CUDA, CPU]) == [CPU]
    with pytest.raises(RuntimeError, match="install onnxruntime-gpu"):
        choose_providers("cuda", [CPU])
    with pytest.raises(ValueError, match="auto, cpu or cuda"):
        choose_providers("gpu", [CUDA, CPU])


@given(st.lists(st.integers(1, 256), max_size=300), st.integers(1, 100), st.one_of(st.none(), st.integers(1, 5000)))
def test_batches_cover_every_input_once_within_both_bounds(lengths, max_rows, max_tokens):
    batches = length_batches(lengths, max_rows, max_tokens)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= max_rows
        if max_tokens is not None and len(batch) > 1:
            assert len(batch) * max(lengths[i] for i in batch) <= max_tokens
    order = [lengths[i] for b in batches for i in b]
    assert order == sorted(order)  # shortest first: little padding


def test_gpu_batches_fill_the_token_budget_not_the_row_count():
    lengths = [128] * 5000
    batches = length_batches(lengths, max_rows=len(lengths), max_tokens=CUDA_BATCH_TOKENS)
    assert [len(b) for b in batches][:3] == [CUDA_BATCH_TOKENS // 128] * 3  # 1,024 rows, not 64


def test_cpu_embedder_batches_by_rows_and_matches_one_by_one():
    embedder = LocalMiniLMEmbedder(device="cpu", batch_size=2)
    assert embedder.active_device == "cpu"
    assert [len(b) for b in embedder.batches([5, 3, 9, 4, 7])] == [2, 2, 1]
    wide = LocalMiniLMEmbedder(device="cpu", batch_size=64)
    lengths = [256] * 10 + [16] * 100
    # Short rows are bounded by the row count, long ones by padded tokens.
    assert [len(b) for b in wide.batches(lengths)] == [64, 36, 4, 4, 2]
    assert all(len(b) * max(lengths[i] for i in b) <= CPU_BATCH_TOKENS for b in wide.batches(lengths))
    texts = ["refund policy", "the robot dock firmware update failed twice", "battery"]
    together = embedder.embed(texts)
    alone = [embedder.embed([t])[0] for t in texts]
    for a, b in zip(together, alone):
        assert max(abs(x - y) for x, y in zip(a, b)) < 1e-4


def test_background_loading_overlaps_start_up_and_embed_still_raises_its_failure():
    import onnxruntime as ort

    embedder = LocalMiniLMEmbedder(device="cpu")
    embedder.start_loading()
    assert len(embedder.embed(["refund policy"])[0]) == 384
    if CUDA not in ort.get_available_providers():
        broken = LocalMiniLMEmbedder(device="cuda")
        broken.start_loading()  # fails on its thread, quietly
        with pytest.raises(RuntimeError, match="install onnxruntime-gpu"):
            broken.embed(["refund policy"])


EARLY_EXIT = """
import sys, time
from rag_assets.config import load_project
from rag_assets.query import open_embedder
open_embedder(load_project().corpus("sample").embedding_model).start_loading()
time.sleep(float(sys.argv[1]))
sys.exit(1)
"""


@pytest.mark.parametrize("seconds", [0.05, 0.1, 0.15, 0.2])
def test_a_process_that_ends_while_the_model_loads_exits_with_its_own_status(seconds):
    # As `rag query` on a corpus not ingested yet does; onnxruntime torn down under the loading
    # thread aborted it (SIGABRT) for 7 of 8 such exits here.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", EARLY_EXIT, str(seconds)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr[-500:]
