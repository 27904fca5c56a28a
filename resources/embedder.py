"""Embedding model resource: a provider union over the offline local model and OpenAI-compatible APIs."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import dagster as dg
from pydantic import Field

from rag_assets.core.embedding import Embedder, LocalMiniLMEmbedder, OpenAIEmbedder
from rag_assets.core.tokens import TokenCounter, get_token_counter


@lru_cache(maxsize=4)
def _local_embedder(model: str, device: str, batch_size: int) -> LocalMiniLMEmbedder:
    # One ONNX session per process, shared by every run the process executes.
    return LocalMiniLMEmbedder(model, device=device, batch_size=batch_size)


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
    device: str = Field("auto", description="local: auto, cpu or cuda.")

    def get_token_counter(self) -> TokenCounter:
        return get_token_counter(self.tokenizer)

    def get_embedder(self) -> Embedder:
        if self.provider == "local":
            return _local_embedder(self.model, self.device, self.batch_size)
        from openai import OpenAI

        if not self.api_key:
            raise ValueError(f"embedding model {self.model!r} needs an API key: set the environment variable "
                             "named by api_key_env in embedding_models.yml")
        client = OpenAI(api_key=self.api_key, base_url=self.base_url, max_retries=self.max_retries,
                        timeout=self.timeout_s)
        return OpenAIEmbedder(
            client,
            model=self.model,
            dimensions=self.dimensions,
            counter=self.get_token_counter(),
            max_input_tokens=self.max_input_tokens,
            batch_size=self.batch_size,
            max_batch_tokens=self.max_batch_tokens,
            max_concurrency=self.max_concurrency,
        )
