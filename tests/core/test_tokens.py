import json
import os
import subprocess
import sys

from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

NO_NETWORK = """
import json, os, socket, sys
def refuse(*a, **k):
    raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
environ = dict(os.environ)
from rag_assets.core.tokens import tiktoken_encoding
print(json.dumps([tiktoken_encoding(sys.argv[1]).encode_ordinary("hello world"), dict(os.environ) == environ]))
"""


def test_tiktoken_loads_offline_and_leaves_the_environment_alone(tmp_path):
    # Published ids of "hello world" in cl100k_base (text-embedding-3-small's encoding) and o200k_base.
    expected = {"cl100k_base": [15339, 1917], "text-embedding-3-small": [15339, 1917], "o200k_base": [24912, 2375]}
    for name, ids in expected.items():
        out = subprocess.run([sys.executable, "-c", NO_NETWORK, name], capture_output=True, text=True,
                             env={**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "never_written")})
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == [ids, True]  # the ids, and os.environ untouched
    assert not (tmp_path / "never_written").exists()


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
