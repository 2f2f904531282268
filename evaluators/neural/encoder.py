"""The XLM-RoBERTa encoders of COMET models, on torch alone: XLM-R (``XLM-RoBERTa``) and XLM-R XL (``XLM-RoBERTa-XL``,
CometKiwi 23 XL/XXL and xCOMET's), selected by ``xl``.

The layout and parameter names are Hugging Face's ``XLMRobertaModel`` (without its pooler), as COMET checkpoints store
them under ``encoder.model.``: embeddings (word + position + token type 0, then LayerNorm), then post-LayerNorm
transformer layers (self-attention, GELU feed-forward).  Position ids start after the padding id:
``padding_idx + cumsum(mask)`` on non-padding tokens.  :meth:`XLMREncoder.forward` returns every hidden state -- the
embedding output and each layer's -- which is what COMET's layer mix reads (``num_hidden_layers + 1`` tensors).
XLM-R XL (Hugging Face's ``XLMRobertaXLModel``) normalises before attention and before the feed-forward (pre-norm),
has no LayerNorm on its embeddings, and normalises the last layer's output (the last hidden state) only.
"""
from __future__ import annotations

from typing import Any, Dict, List

import torch
from torch import nn
from torch.nn import functional as F


class _Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, eps: float, pre_norm: bool = False) -> None:
        super().__init__()
        self.heads = heads
        self.pre_norm = pre_norm
        self.attention = nn.Module()
        if pre_norm:  # XLM-R XL: LayerNorm before attention and before the feed-forward, residuals unnormalised
            self.attention.self_attn_layer_norm = nn.LayerNorm(hidden, eps=eps)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.attention.self = nn.Module()
        self.attention.self.query = nn.Linear(hidden, hidden)
        self.attention.self.key = nn.Linear(hidden, hidden)
        self.attention.self.value = nn.Linear(hidden, hidden)
        self.attention.output = nn.Module()
        self.attention.output.dense = nn.Linear(hidden, hidden)
        self.intermediate = nn.Module()
        self.intermediate.dense = nn.Linear(hidden, intermediate)
        self.output = nn.Module()
        self.output.dense = nn.Linear(intermediate, hidden)
        if not pre_norm:
            self.attention.output.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.output.LayerNorm = nn.LayerNorm(hidden, eps=eps)

    def _attend(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape
        sa = self.attention.self

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

        context = F.scaled_dot_product_attention(heads(sa.query(x)), heads(sa.key(x)), heads(sa.value(x)),
                                                 attn_mask=keep)
        return self.attention.output.dense(context.transpose(1, 2).reshape(batch, length, hidden))

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        if self.pre_norm:
            x = self._attend(self.attention.self_attn_layer_norm(x), keep) + x
            return self.output.dense(F.gelu(self.intermediate.dense(self.LayerNorm(x)))) + x
        x = self.attention.output.LayerNorm(self._attend(x, keep) + x)
        h = F.gelu(self.intermediate.dense(x))
        return self.output.LayerNorm(self.output.dense(h) + x)


class XLMREncoder(nn.Module):
    """XLM-R from its ``config.json`` values (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
    ``intermediate_size``, ``vocab_size``, ``max_position_embeddings``, ``type_vocab_size``, ``layer_norm_eps``,
    ``pad_token_id``, ``hidden_act`` gelu)."""

    def __init__(self, config: Dict[str, Any], xl: bool = False) -> None:
        super().__init__()
        hidden = int(config["hidden_size"])
        eps = float(config.get("layer_norm_eps", 1e-5))
        self.xl = xl
        self.padding_idx = int(config.get("pad_token_id", 1))
        self.embeddings = nn.Module()
        self.embeddings.word_embeddings = nn.Embedding(int(config["vocab_size"]), hidden)
        self.embeddings.position_embeddings = nn.Embedding(int(config["max_position_embeddings"]), hidden)
        self.embeddings.token_type_embeddings = nn.Embedding(int(config.get("type_vocab_size", 1)), hidden)
        self.encoder = nn.Module()
        if xl:  # no LayerNorm on the embeddings; one after the last layer
            self.encoder.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        else:
            self.embeddings.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.encoder.layer = nn.ModuleList(
            _Layer(hidden, int(config["num_attention_heads"]), int(config["intermediate_size"]), eps, pre_norm=xl)
            for _ in range(int(config["num_hidden_layers"])))
        self.hidden_size = hidden
        self.num_layers = int(config["num_hidden_layers"]) + 1  # the embedding output and every layer
        self.max_positions = int(config["max_position_embeddings"]) - 2

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> List[torch.Tensor]:
        mask = input_ids.ne(self.padding_idx).int()
        positions = torch.cumsum(mask, dim=1) * mask + self.padding_idx
        emb = self.embeddings
        x = emb.word_embeddings(input_ids) + emb.token_type_embeddings.weight[0] + emb.position_embeddings(positions)
        if not self.xl:
            x = emb.LayerNorm(x)
        keep = attention_mask.bool()[:, None, None, :]
        states = [x]
        for layer in self.encoder.layer:
            x = layer(x, keep)
            states.append(x)
        if self.xl:  # Hugging Face's XL returns the last layer's output normalised, the others as they are
            states[-1] = self.encoder.LayerNorm(x)
        return states


def check_config(config: Dict[str, Any], where: str) -> None:
    """Refuse an encoder this module does not implement, in one line."""
    act = config.get("hidden_act", "gelu")
    if act != "gelu":
        raise ValueError(f"{where}: hidden_act {act!r}; the XLM-R encoder here implements gelu")
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    if hidden % heads:
        raise ValueError(f"{where}: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{where}: position_embedding_type {config['position_embedding_type']!r}; only absolute")
