"""The mT5 encoder-decoder of MetricX, on torch alone: the encoder over the input, one decoder step from token 0, and
one logit of the language-model head (MetricX-23 and -24's read-out: token 250089, ``<extra_id_10>``).

Parameters are Hugging Face's ``MT5ForConditionalGeneration`` names, which google-research/metricx's
``MT5ForRegression`` shares (``shared``, ``encoder.block.N.layer...``, ``decoder...``, ``lm_head``).  Each step is
the one transformers 5 takes, in the same order, so fp32 scores agree to ~1e-6:

* RMS norm (``MT5LayerNorm``): ``w * (x * rsqrt(mean(x^2) + eps))``, the mean in fp32, cast back for bf16/fp16;
* attention without the 1/sqrt(d) scale; the encoder adds the relative position bias of its first layer (buckets:
  ``MT5Attention._relative_position_bucket``, bidirectional) in every layer, and the padding mask (the dtype's
  minimum); the decoder's one step attends to itself (one key: its value) and to the encoder's output;
* feed-forward ``wo(act(wi_0 x) * wi_1 x)`` (``gated-gelu``: the tanh GELU, ``gelu_new``) or ``wo(act(wi x))``;
* the decoder's output times ``lm_head``'s row 250089 (scaled by ``d_model ** -0.5`` first when the embeddings are
  tied), clipped to [0, 25] by the caller.
"""
from __future__ import annotations

import math
from typing import Any, Dict

import torch
from torch.nn import functional as F

#: MetricX's read-out: the logit of <extra_id_10>
READ_OUT = 250089


def _gelu_new(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def _gelu(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x)


ACTIVATIONS = {"gated-gelu": (True, _gelu_new), "gated-relu": (True, F.relu), "gated-gelu_new": (True, _gelu_new),
               "relu": (False, F.relu), "gelu": (False, _gelu), "gelu_new": (False, _gelu_new)}


def relative_buckets(query: int, key: int, bidirectional: bool, buckets: int, distance: int) -> torch.Tensor:
    """Bucket of each (query, key) relative position (``memory - context``), as transformers' mT5 computes it."""
    relative = torch.arange(key, dtype=torch.long)[None, :] - torch.arange(query, dtype=torch.long)[:, None]
    out = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        out += (relative > 0).to(torch.long) * buckets
        relative = torch.abs(relative)
    else:
        relative = -torch.min(relative, torch.zeros_like(relative))
    exact = buckets // 2
    small = relative < exact
    large = exact + (torch.log(relative.float() / exact) / math.log(distance / exact)
                     * (buckets - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return out + torch.where(small, relative, large)


class MT5Scorer:
    """MetricX's forward pass over ``weights`` (a state dict) shaped by ``config`` (``config.json``'s fields)."""

    def __init__(self, weights: Dict[str, torch.Tensor], config: Dict[str, Any]) -> None:
        self.w = weights
        self.heads, self.d_kv = int(config["num_heads"]), int(config["d_kv"])
        self.eps = float(config.get("layer_norm_epsilon", 1e-6))
        self.layers = int(config["num_layers"])
        self.decoder_layers = int(config.get("num_decoder_layers") or self.layers)
        self.buckets = int(config.get("relative_attention_num_buckets", 32))
        self.distance = int(config.get("relative_attention_max_distance", 128))
        self.gated, self.act = ACTIVATIONS[config.get("feed_forward_proj", "gated-gelu")]
        self.tied = bool(config.get("tie_word_embeddings", False))
        self.d_model = int(config["d_model"])
        head = self.w["shared.weight"] if self.tied else self.w["lm_head.weight"]
        self.read_out = head[READ_OUT:READ_OUT + 1]

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        weight = self.w[name]
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        if weight.dtype in (torch.float16, torch.bfloat16):
            x = x.to(weight.dtype)
        return weight * x

    def _attention(self, x: torch.Tensor, memory: torch.Tensor, prefix: str, bias: torch.Tensor) -> torch.Tensor:
        w = self.w
        batch, length = x.shape[:2]
        q = F.linear(x, w[prefix + "q.weight"]).view(batch, length, -1, self.d_kv).transpose(1, 2)
        k = F.linear(memory, w[prefix + "k.weight"]).view(batch, memory.shape[1], -1, self.d_kv).transpose(1, 2)
        v = F.linear(memory, w[prefix + "v.weight"]).view(batch, memory.shape[1], -1, self.d_kv).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(2, 3)) + bias
        weights = F.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).contiguous().reshape(batch, length, -1)
        return F.linear(out, w[prefix + "o.weight"])

    def _feed_forward(self, x: torch.Tensor, prefix: str) -> torch.Tensor:
        w = self.w
        h = self._norm(x, prefix + "layer_norm.weight")
        if self.gated:
            h = self.act(F.linear(h, w[prefix + "DenseReluDense.wi_0.weight"])) \
                * F.linear(h, w[prefix + "DenseReluDense.wi_1.weight"])
        else:
            h = self.act(F.linear(h, w[prefix + "DenseReluDense.wi.weight"]))
        wo = w[prefix + "DenseReluDense.wo.weight"]
        return x + F.linear(h.to(wo.dtype), wo)

    def _position_bias(self, query: int, key: int, prefix: str, bidirectional: bool) -> torch.Tensor:
        table = self.w[prefix + "relative_attention_bias.weight"]
        buckets = relative_buckets(query, key, bidirectional, self.buckets, self.distance).to(table.device)
        return F.embedding(buckets, table).permute([2, 0, 1]).unsqueeze(0)

    def __call__(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The read-out logit of each row of ``ids`` (padding where ``mask`` is 0), unclipped."""
        return F.linear(self.decoder_output(ids, mask), self.read_out)[:, 0]

    def decoder_output(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The decoder's normalised output of each row (what the language-model head reads), scaled when tied."""
        w = self.w
        x = F.embedding(ids, w["shared.weight"])
        dtype = x.dtype
        padding = (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        length = ids.shape[1]
        bias = self._position_bias(length, length, "encoder.block.0.layer.0.SelfAttention.", True) + padding
        for n in range(self.layers):
            block = f"encoder.block.{n}.layer."
            h = self._norm(x, block + "0.layer_norm.weight")
            x = x + self._attention(h, h, block + "0.SelfAttention.", bias)
            x = self._feed_forward(x, block + "1.")
        memory = self._norm(x, "encoder.final_layer_norm.weight")
        y = F.embedding(torch.zeros((ids.shape[0], 1), dtype=torch.long, device=ids.device), w["shared.weight"])
        self_bias = self._position_bias(1, 1, "decoder.block.0.layer.0.SelfAttention.", False)
        for n in range(self.decoder_layers):
            block = f"decoder.block.{n}.layer."
            h = self._norm(y, block + "0.layer_norm.weight")
            y = y + self._attention(h, h, block + "0.SelfAttention.", self_bias)
            h = self._norm(y, block + "1.layer_norm.weight")
            y = y + self._attention(h, memory, block + "1.EncDecAttention.", padding)
            y = self._feed_forward(y, block + "2.")
        y = self._norm(y, "decoder.final_layer_norm.weight")
        if self.tied:
            y = y * (self.d_model ** -0.5)
        return y[:, 0]


def expected_weights(config: Dict[str, Any]) -> Dict[str, tuple]:
    """Every parameter the forward pass reads, with its shape."""
    d, kv, heads, ff = int(config["d_model"]), int(config["d_kv"]), int(config["num_heads"]), int(config["d_ff"])
    inner = kv * heads
    gated = ACTIVATIONS[config.get("feed_forward_proj", "gated-gelu")][0]
    buckets = int(config.get("relative_attention_num_buckets", 32))
    out: Dict[str, tuple] = {"shared.weight": (int(config["vocab_size"]), d), "encoder.final_layer_norm.weight": (d,),
                             "decoder.final_layer_norm.weight": (d,)}
    if not config.get("tie_word_embeddings", False):
        out["lm_head.weight"] = (int(config["vocab_size"]), d)

    def attention(prefix: str) -> None:
        out.update({prefix + p: (inner, d) for p in ("q.weight", "k.weight", "v.weight")})
        out[prefix + "o.weight"] = (d, inner)

    def feed_forward(prefix: str) -> None:
        out[prefix + "layer_norm.weight"] = (d,)
        for name in (("wi_0", "wi_1") if gated else ("wi",)):
            out[f"{prefix}DenseReluDense.{name}.weight"] = (ff, d)
        out[prefix + "DenseReluDense.wo.weight"] = (d, ff)

    for n in range(int(config["num_layers"])):
        block = f"encoder.block.{n}.layer."
        out[block + "0.layer_norm.weight"] = (d,)
        attention(block + "0.SelfAttention.")
        feed_forward(block + "1.")
    for n in range(int(config.get("num_decoder_layers") or config["num_layers"])):
        block = f"decoder.block.{n}.layer."
        out[block + "0.layer_norm.weight"] = (d,)
        attention(block + "0.SelfAttention.")
        out[block + "1.layer_norm.weight"] = (d,)
        attention(block + "1.EncDecAttention.")
        feed_forward(block + "2.")
    out["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = (buckets, heads)
    out["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = (buckets, heads)
    return out
