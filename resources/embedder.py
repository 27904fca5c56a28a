"""Embedding model resource: a provider union over the offline local model and OpenAI-compatible APIs."""

from __future__ import annotations

from typing import Literal

import dagster as dg
from pydantic import Field

from rag_assets.core.embedding import Embedder, build_embedder
from rag_assets.core.tokens import TokenCounter, get_token_counter


class EmbedderResource(dg.ConfigurableResource):
    """Embeds texts with the model a corpus declares in ``embedding_models.yml``."""

    provider: Literal["local", "openai"] = Field(description="local (offline MiniLM) or openai (any compatible endpoint).")
    model: str = Field(description="Model id.")
    dimensions: int = Field(description="Vector size the model returns.")
    max_input_tokens: int = Field(description="Longest input the model reads; longer inputs are refused.")
    tokenizer: str = Field(description="Tokenizer used to count tokens exactly as the model does.")
    base_url: str | None = Field(None, description="openai: base URL of the endpoint.")
    api_key: str | None = Field(None, description="openai: API key (set it with dg.EnvVar, never inline).")
    batch_size: int = Field(64, description="Inputs per request / per ONNX batch.")
    max_batch_tokens: int = Field(250_000, description="openai: most tokens in one request.")
    max_concurrency: int = Field(4, description="openai: requests in flight at once.")
    timeout_s: float = Field(60.0, description="openai: per-request timeout.")
    max_retries: int = Field(6, description="openai: retries with exponential backoff (honours Retry-After).")
    compute: Literal["float32", "int8"] = Field("float32", description="local: float32, or int8 products on the CPU.")

    def get_token_counter(self) -> TokenCounter:
        return get_token_counter(self.tokenizer)

    def get_embedder(self) -> Embedder:
        return build_embedder(**self.model_dump())
