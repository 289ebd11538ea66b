"""Random numbers aligned: drawn from the CPU generator in both runs, so both see the same values."""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
import torch.nn.modules.rnn as rnn_modules

# -- random numbers drawn from the CPU generator in both runs ------------------------
#
# Plain patches, not the torch function mode: a mode is switched off while its handler
# runs, so the Tensor.normal_ that nn.init.normal_ calls inside would escape it.
#
# Each wrapper accepts every call torch's function does. These are builtins, without a
# signature inspect can read: what a wrapper reads, it reads as torch's documented signature
# places it (the tensor first, by position or as ``input=``; ``device`` and the rest of the
# factories' options by keyword only), and anything else it passes on as it came.


def _input(args, kwargs):
    """The first argument of a torch builtin, given by position or as ``input=``, and the
    rest of the call without it; (None, args, kwargs) where there is none."""
    if args:
        return args[0], args[1:], kwargs
    if "input" in kwargs:
        return kwargs["input"], (), {k: v for k, v in kwargs.items() if k != "input"}
    return None, args, kwargs


def _is_cpu(device) -> bool:
    return device is None or torch.device(device).type == "cpu"


def _factory(original):
    """torch.randn(..., device=d): drawn on the CPU, then moved to d."""

    def aligned(*args, **kwargs):
        device = kwargs.get("device")
        if _is_cpu(device):
            return original(*args, **kwargs)
        requires_grad = kwargs.pop("requires_grad", False)
        drawn = original(*args, **{**kwargs, "device": "cpu"}).to(device)
        return drawn.requires_grad_() if requires_grad else drawn

    return aligned


def _like_factory(original):
    """torch.randn_like(x): drawn on the CPU in x's shape, then moved to x's device."""

    def aligned(*args, **kwargs):
        like, rest, options = _input(args, kwargs)
        if not isinstance(like, torch.Tensor):
            return original(*args, **kwargs)
        device = options.get("device", like.device)
        if _is_cpu(device):
            return original(*args, **kwargs)
        requires_grad = options.pop("requires_grad", False)
        options = {**options, "device": "cpu", "dtype": options.get("dtype", like.dtype)}
        drawn = original(torch.empty(like.shape, dtype=options["dtype"]), *rest, **options).to(device)
        return drawn.requires_grad_() if requires_grad else drawn

    return aligned


def _fill(original):
    """tensor.normal_() and kin on a device tensor: drawn on the CPU, then copied in, the tensor's
    SPMD layout kept."""

    def aligned(self, *args, **kwargs):
        if _is_cpu(self.device):
            return original(self, *args, **kwargs)
        drawn = original(torch.empty(self.shape, dtype=self.dtype), *args, **kwargs)
        layout = _layout(self)
        with torch.no_grad():
            self.copy_(drawn)
        if layout is not None:
            _lay_out(self, *layout)
        return self

    return aligned


def _layout(tensor):
    """(the HLO sharding, its OpSharding) of an XLA tensor marked sharded; None otherwise."""
    if tensor.device.type != "xla":
        return None
    from torch_xla import _XLAC

    spec = _XLAC._get_xla_sharding_spec(tensor)
    return (spec, _XLAC._get_xla_op_sharding(tensor)) if spec and "replicated" not in spec else None


def _lay_out(tensor, spec: str, op_sharding) -> None:
    """The layout ``_layout`` read, given back where a copy replaced it: a copy from the CPU into a
    parameter ``to_empty`` made and the sharding rules marked (FSDP2's initialisation on the meta
    device) leaves it replicated, and this instrument must not change the program's layouts."""
    from torch_xla import _XLAC

    if _XLAC._get_xla_sharding_spec(tensor) != spec:
        _XLAC._xla_clear_sharding(tensor)
        _XLAC._xla_mark_sharding(tensor, op_sharding)


def _bernoulli(original):
    """torch.bernoulli(p) as ``uniform < p`` with the uniform drawn on the CPU (any device)."""

    def aligned(*args, **kwargs):
        probs, rest, options = _input(args, kwargs)
        if rest or options or not isinstance(probs, torch.Tensor):
            return original(*args, **kwargs)
        uniform = torch.rand(probs.shape, dtype=torch.float32).to(probs.device)
        return (uniform < probs).to(probs.dtype)

    return aligned


def _dropout(channel_wise: int):
    """Dropout with its mask drawn on the CPU, the same way on every device."""

    def aligned(input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        if p == 1:
            return input.mul_(0) if inplace else input.mul(0)
        shape = list(input.shape)
        if channel_wise:
            keep_dims = 2 if input.dim() == channel_wise + 2 else 1  # batched or not
            shape = shape[:keep_dims] + [1] * (len(shape) - keep_dims)
        keep = torch.empty(shape, dtype=torch.float32).bernoulli_(1 - p)
        mask = keep.to(device=input.device, dtype=input.dtype)
        return input.mul_(mask).div_(1 - p) if inplace else input * mask / (1 - p)

    return aligned


def _attention(original):
    """``F.scaled_dot_product_attention`` with ``dropout_p`` (GPT-2, BERT and most
    transformers' attention in training) as its math, the attention weights dropped by the
    aligned ``F.dropout``: the fused kernels draw that mask from their own device's generator.
    Without dropout, the kernel as it is."""

    def aligned(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        if not dropout_p:
            return original(
                query,
                key,
                value,
                attn_mask=attn_mask,
                dropout_p=dropout_p,
                is_causal=is_causal,
                scale=scale,
                enable_gqa=enable_gqa,
            )
        if enable_gqa:  # grouped keys and values: each serves several query heads
            groups = query.size(-3) // key.size(-3)
            key, value = key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)
        scale = query.size(-1) ** -0.5 if scale is None else scale
        scores = query @ key.transpose(-2, -1) * scale
        if is_causal:
            causal = torch.ones(query.size(-2), key.size(-2), dtype=torch.bool, device=query.device).tril()
            scores = scores.masked_fill(~causal, float("-inf"))
        if attn_mask is not None:
            scores = (
                scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
            )
        return F.dropout(scores.softmax(dim=-1), dropout_p, True) @ value

    return aligned


def _multinomial(original):
    """torch.multinomial(probs, 1) (and with replacement) as the inverse of the cumulative
    distribution at a uniform drawn on the CPU, the same way on every device and without a
    read to the host: a trainer that samples text between its steps would otherwise draw
    from the CPU generator in one run and the XLA generator in the other, and the dropout
    masks of every later step would differ. Other forms (samples without replacement, a
    generator, ``out=``) are left as they are."""

    def aligned(*args, **kwargs):
        try:
            bound = _MULTINOMIAL.bind(*args, **kwargs).arguments
        except TypeError:
            return original(*args, **kwargs)
        probs, num_samples, replacement = bound["input"], bound["num_samples"], bound.get("replacement", False)
        drawn_elsewhere = bound.get("generator") is not None or bound.get("out") is not None
        if drawn_elsewhere or not isinstance(probs, torch.Tensor) or (num_samples != 1 and not replacement):
            return original(*args, **kwargs)
        uniform = torch.rand((*probs.shape[:-1], num_samples), dtype=torch.float64).to(probs.device)
        cdf = probs.to(torch.float64).cumsum(-1)
        cdf = cdf / cdf[..., -1:]
        drawn = (cdf.unsqueeze(-2) <= uniform.unsqueeze(-1)).sum(-1)
        return drawn.clamp(max=probs.shape[-1] - 1)

    return aligned


def _multinomial_documented(input, num_samples, replacement=False, *, generator=None, out=None):
    """torch.multinomial's documented signature (Tensor.multinomial's, with the tensor as ``self``)."""


_MULTINOMIAL = inspect.signature(_multinomial_documented)


class _LayerwiseRNNs:
    """``torch._VF`` as ``nn.RNN``/``LSTM``/``GRU`` see it: a stack of layers with dropout
    between them runs one layer at a time, with the aligned ``F.dropout`` between layers
    (the fused kernel draws that dropout from its own device's generator). The same
    arithmetic, layer by layer, as the kernel's own loop."""

    def __init__(self, vf) -> None:
        self._vf = vf

    def __getattr__(self, name):
        return getattr(self._vf, name)

    def lstm(self, *args):
        return self._layerwise(self._vf.lstm, args)

    def gru(self, *args):
        return self._layerwise(self._vf.gru, args)

    def rnn_tanh(self, *args):
        return self._layerwise(self._vf.rnn_tanh, args)

    def rnn_relu(self, *args):
        return self._layerwise(self._vf.rnn_relu, args)

    @staticmethod
    def _layerwise(kernel, args):
        # (input, hx, weights, bias, layers, dropout, train, bidirectional, batch_first), or
        # for packed sequences (input, batch_sizes, hx, weights, bias, layers, dropout, train, bidirectional)
        packed = isinstance(args[3], (list, tuple))
        lead, (hx, weights, bias, layers, dropout, train, bidirectional), tail = (
            (args[:2], args[2:9], ()) if packed else (args[:1], args[1:8], args[8:])
        )
        if not (train and dropout > 0 and layers > 1):
            return kernel(*args)
        directions = 2 if bidirectional else 1
        per_layer = len(weights) // layers
        x, *rest = lead
        finals = []
        for layer in range(layers):
            states = slice(layer * directions, (layer + 1) * directions)
            layer_hx = tuple(h[states] for h in hx) if isinstance(hx, (list, tuple)) else hx[states]
            out = kernel(
                x,
                *rest,
                layer_hx,
                weights[layer * per_layer : (layer + 1) * per_layer],
                bias,
                1,
                0.0,
                train,
                bidirectional,
                *tail,
            )
            finals.append(out[1:])
            x = F.dropout(out[0], dropout, True) if layer < layers - 1 else out[0]
        return (x, *(torch.cat(parts) for parts in zip(*finals)))


def _install_rng_alignment() -> None:
    for name in ("randn", "rand", "randint", "randperm", "normal"):
        setattr(torch, name, _factory(getattr(torch, name)))
    for name in ("randn_like", "rand_like", "randint_like"):
        setattr(torch, name, _like_factory(getattr(torch, name)))
    for name in (
        "normal_",
        "uniform_",
        "bernoulli_",
        "random_",
        "exponential_",
        "geometric_",
        "log_normal_",
        "cauchy_",
    ):
        setattr(torch.Tensor, name, _fill(getattr(torch.Tensor, name)))
    torch.bernoulli = _bernoulli(torch.bernoulli)
    torch.multinomial = _multinomial(torch.multinomial)
    torch.Tensor.multinomial = _multinomial(torch.Tensor.multinomial)
    for name, channel_wise in (("dropout", 0), ("dropout1d", 1), ("dropout2d", 2), ("dropout3d", 3)):
        setattr(F, name, _dropout(channel_wise))
    F.scaled_dot_product_attention = _attention(F.scaled_dot_product_attention)
    rnn_modules._VF = _LayerwiseRNNs(torch._VF)
