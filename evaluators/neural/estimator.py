"""What COMET puts on top of the encoder, for the families it scores with (unbabel-comet 2.2.7).

* The layer mix (COMET's ``LayerwiseAttention``): ``gamma * sum_i w_i * h_i`` over the embedding output and every
  layer, ``w = softmax(scalars)`` or ``sparsemax(scalars)`` (``layer_transformation``; ``sparsemax_patch`` is softmax,
  as unbabel-comet >= 2.2.4 loads it); with ``layer_norm`` each ``h_i`` is first normalised per sentence over its
  unmasked tokens x dimensions (``(h - mean) / sqrt(var + 1e-12)``).  ``layer`` an integer: that hidden state alone.
* Pooling of a sentence encoded alone (regression families): ``avg`` (mean over non-padding tokens, ``<s>`` and
  ``</s>`` included), ``max``, ``cls`` (position 0 of the mix) or ``default`` (position 0 of the last layer).
* The estimator: ``Linear, activation, Dropout`` per hidden size, then ``Linear`` to one score and the optional final
  activation; the same ``nn.Sequential`` indices as COMET's ``FeedForward`` (``estimator.ff.N``).
* xCOMET (``XCOMETMetric``) is a unified model with a token tagger (``hidden2tag``): its score adds an MQM score
  of the error spans the tags give (:mod:`.scorer` decodes them as unbabel-comet does).
* Its input: ``RegressionMetric`` ``[mt, ref, mt*ref, |mt-ref|, mt*src, |mt-src|]``; ``ReferencelessRegression``
  ``[mt, src, mt*src, |mt-src|]``; ``UnifiedMetric`` the position-0 vector of the mix over one joint sequence
  ``<s> mt </s></s> src </s>`` (and ``ref``), its score the mean of ``[mt;src]``, ``[mt;ref]``, ``[mt;src;ref]`` when
  both are given and the model reads both.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

import torch
from torch import nn


def sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Sparsemax over the one dimension of ``z`` (Martins & Astudillo, 2016), as the entmax package computes it:
    shifted by the maximum, threshold ``tau = (sum of the support - 1) / |support|``."""
    z = z - z.max()
    ordered, _ = torch.sort(z, descending=True)
    cumulative = ordered.cumsum(0) - 1
    ranks = torch.arange(1, z.numel() + 1, device=z.device, dtype=z.dtype)
    support = (ranks * ordered > cumulative).sum()
    tau = cumulative[support - 1] / support.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class LayerMix(nn.Module):
    """COMET's ``LayerwiseAttention`` at inference (parameters ``scalar_parameters.N`` and ``gamma``)."""

    def __init__(self, num_layers: int, layer_norm: bool, transformation: str) -> None:
        super().__init__()
        self.scalar_parameters = nn.ParameterList(nn.Parameter(torch.zeros(1)) for _ in range(num_layers))
        self.gamma = nn.Parameter(torch.ones(1))
        self.layer_norm = layer_norm
        self.transform = sparsemax if transformation == "sparsemax" else lambda w: torch.softmax(w, dim=0)

    def forward(self, states: Sequence[torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        weights = self.transform(torch.cat(list(self.scalar_parameters)))
        if not self.layer_norm:
            return self.gamma * sum(w * h for w, h in zip(weights.split(1), states))
        keep = mask.float()
        broadcast = keep.unsqueeze(-1)
        batch, _, dim = states[0].shape
        count = keep.sum(1) * dim

        def normalised(h: torch.Tensor) -> torch.Tensor:
            masked = h * broadcast
            mean = (masked.view(batch, -1).sum(1) / count).view(batch, 1, 1)
            var = (((masked - mean) * broadcast) ** 2).view(batch, -1).sum(1) / count
            return (h - mean) / torch.sqrt(var + 1e-12).view(batch, 1, 1)

        return self.gamma * sum(w * normalised(h) for w, h in zip(weights.split(1), states))


def feed_forward(in_dim: int, hidden_sizes: Sequence[int], activations: str, final: Optional[str]) -> nn.Sequential:
    """COMET's ``FeedForward`` layers, the same indices (dropout is the identity at inference)."""
    def act(name: str) -> nn.Module:
        cls = getattr(nn, name.title(), None)
        if cls is None:
            raise ValueError(f"activation {name!r} is not a torch.nn module (COMET takes nn.<Name>)")
        return cls()

    sizes = [in_dim, *hidden_sizes]
    modules: List[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        modules += [nn.Linear(a, b), act(activations), nn.Dropout(0.0)]
    modules.append(nn.Linear(sizes[-1], 1))
    if final is not None:
        modules.append(act(final))
    return nn.Sequential(*modules)


class Head(nn.Module):
    """The layer mix (or one layer) and the estimator of one family: ``pool`` turns the encoder's states into
    sentence vectors; ``estimate`` gives the scores."""

    def __init__(self, family: str, hp: Dict[str, Any], hidden: int, num_layers: int) -> None:
        super().__init__()
        self.family = family
        joint = family in ("unified_metric", "xcomet_metric")
        layer: Union[str, int] = hp.get("sent_layer" if joint else "layer", "mix")
        transformation = hp.get("layer_transformation", "sparsemax" if joint else "softmax")
        if transformation == "sparsemax_patch":
            transformation = "softmax"
        if transformation not in ("softmax", "sparsemax"):
            raise ValueError(f"layer_transformation {transformation!r} (softmax or sparsemax)")
        self.layer = layer
        if layer == "mix":
            self.layerwise_attention = LayerMix(num_layers, bool(hp.get("layer_norm", family != "xcomet_metric")),
                                                transformation)
        elif not (isinstance(layer, int) and 0 <= layer < num_layers):
            raise ValueError(f"layer {layer!r} (mix or 0 to {num_layers - 1})")
        self.pool_kind = "cls" if joint else hp.get("pool", "avg")
        if self.pool_kind not in ("avg", "max", "cls", "default"):
            raise ValueError(f"pool {self.pool_kind!r} (avg, max, cls or default)")
        width = {"regression_metric": 6, "referenceless_regression_metric": 4, "unified_metric": 1,
                 "xcomet_metric": 1}[family]
        self.estimator = nn.Module()
        self.estimator.ff = feed_forward(hidden * width, hp.get("hidden_sizes", [3072, 1024]),
                                         hp.get("activations", "Tanh"), hp.get("final_activation"))
        self.word_layer = None
        if family == "xcomet_metric":  # token tags: O, I-minor, I-major, I-critical, from one hidden state
            labels = hp.get("error_labels", ["minor", "major", "critical"])
            if list(labels) != ["minor", "major", "critical"]:
                raise ValueError(f"error_labels {labels!r} (xCOMET's are minor, major, critical)")
            self.word_layer = hp.get("word_layer", 36)
            if not (isinstance(self.word_layer, int) and 0 <= self.word_layer < num_layers):
                raise ValueError(f"word_layer {self.word_layer!r} (0 to {num_layers - 1})")
            self.hidden2tag = nn.Linear(hidden, 4)

    def pool(self, states: List[torch.Tensor], input_ids: torch.Tensor, mask: torch.Tensor,
             padding_idx: int) -> torch.Tensor:
        mixed = self.layerwise_attention(states, mask) if self.layer == "mix" else states[self.layer]
        if self.pool_kind == "cls":
            return mixed[:, 0, :]
        if self.pool_kind == "default":
            return states[-1][:, 0, :]
        pad = input_ids.eq(padding_idx).unsqueeze(-1)
        if self.pool_kind == "max":
            return mixed.float().masked_fill(pad, float("-inf")).max(dim=1)[0]
        summed = mixed.float().masked_fill(pad, 0.0).sum(1)
        return summed / mask.unsqueeze(-1).expand(mixed.size()).float().sum(1)

    def tag_probabilities(self, states: List[torch.Tensor]) -> torch.Tensor:
        """xCOMET: each token's probabilities of O, I-minor, I-major, I-critical (softmax of ``hidden2tag`` over the
        ``word_layer`` hidden state)."""
        return torch.softmax(self.hidden2tag(states[self.word_layer]), dim=2)

    def estimate(self, mt: torch.Tensor, src: Optional[torch.Tensor] = None,
                 ref: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Scores of sentence vectors (regression families) or of joint-sequence vectors (``mt`` alone: unified)."""
        if self.family == "regression_metric":
            features = torch.cat((mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1)
        elif self.family == "referenceless_regression_metric":
            features = torch.cat((mt, src, mt * src, torch.abs(mt - src)), dim=1)
        else:
            features = mt
        return self.estimator.ff(features).view(-1)
