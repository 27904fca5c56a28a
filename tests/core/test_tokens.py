import subprocess
import sys

from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

NO_NETWORK = """
import socket, sys
def refuse(*a, **k):
    raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
import os
os.environ["TIKTOKEN_CACHE_DIR"] = sys.argv[1]
from rag_assets.core.tokens import get_token_counter
print(get_token_counter(sys.argv[2]).count("hello world"))
"""


def test_tiktoken_loads_offline_into_an_empty_cache(tmp_path):
    for name in ("cl100k_base", "o200k_base", "text-embedding-3-small"):
        cache = tmp_path / name
        out = subprocess.run([sys.executable, "-c", NO_NETWORK, str(cache), name], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "2"
        assert any(cache.iterdir()), "the packaged BPE file should have been placed in the cache"


def test_cl100k_matches_the_official_token_ids():
    counter = get_token_counter("cl100k_base")
    # Published cl100k_base ids for "hello world".
    assert counter.encode("hello world") == [15339, 1917]


def test_token_end_arrays_ascend_and_match_the_count():
    for name in ("cl100k_base", MINILM_TOKENIZER):
        counter = get_token_counter(name)
        text = "Refunds within 45 days. 日本語のテキスト and emoji 🎉 too."
        ends, in_bytes = counter.token_end_array(text)
        assert list(ends) == sorted(ends)
        assert ends[-1] <= (len(text.encode()) if in_bytes else len(text))
        assert counter.count(text) == len(ends) + counter.special_tokens


def test_wordpiece_counts_specials():
    counter = get_token_counter(MINILM_TOKENIZER)
    assert counter.count("") == 2
    assert counter.count("hello") == 3
