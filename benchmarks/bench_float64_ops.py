"""What float64 costs on XLA:CPU, op by op: each op of a GPT's training step, forward and
backward, run on the XLA device (CPU PJRT) in float32 and in float64, and eagerly on the CPU in
both, timed after its graph is compiled; printed as the float64 / float32 ratio of each (issue 39).

verify's float64 mode (migrate_xla/verify/child/float64.py) runs the migrated script in float64
on XLA:CPU and the reference eagerly in float64; a d12 GPT of 6.9 M parameters took 78-185 s a
step there against 0.5 s eager. This table is what a cost model of that decision needs: which
ops XLA's CPU backend computes far slower in float64 than in float32 (and than eager float64).

The shapes are a GPT's (``--tokens`` a micro-step, ``--width`` the embedding, ``--heads``,
``--vocab``): the defaults are that GPT's, 32 tokens of width 192 in 6 heads, vocabulary 65.
A row: the op's median time a call (forward + backward, synced) in ms for XLA f32, XLA f64,
eager f32, eager f64 (one thread), then XLA f64/f32, XLA f64 / eager f64, and the first call's time (the
graph's compilation) in f32 and f64.

    PJRT_DEVICE=CPU .venv/bin/python benchmarks/bench_float64_ops.py [--only matmul,bmm] [--tokens 32]
    PJRT_DEVICE=CPU .venv/bin/python benchmarks/bench_float64_ops.py --gpt-step 12   # whole steps, ~3 min
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("PJRT_DEVICE", "CPU")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402

DTYPES = (torch.float32, torch.float64)
# multiply-adds a call (forward and backward: three products of the forward's size) of the rows
# whose throughput the summary prints
MACS = {"matmul 512x768x768": 3 * 512 * 768 * 768, "conv2d 64ch 3x3": 3 * 8 * 64 * 28 * 28 * 64 * 9}


def cases(tokens: int, width: int, heads: int, vocab: int):
    """name -> (build(dtype, device) -> (fn, inputs)): fn(*inputs) is the op's output; the
    benchmark differentiates its sum with respect to every input that requires grad."""
    B, T, C, H = 1, tokens, width, heads
    D = C // H

    def leaf(*shape, dtype, device, grad=True):
        return torch.randn(*shape, dtype=dtype).to(device).requires_grad_(grad)

    def linear(dtype, device):  # the attention's and the MLP's projections: (T, C) @ (C, 4C)
        return F.linear, (leaf(B * T, C, dtype=dtype, device=device), leaf(4 * C, C, dtype=dtype, device=device))

    def lm_head(dtype, device):  # (T, C) @ (C, vocab)
        return F.linear, (leaf(B * T, C, dtype=dtype, device=device), leaf(vocab, C, dtype=dtype, device=device))

    def bmm_qk(dtype, device):  # q @ k^T in heads: (B, H, T, D) @ (B, H, D, T)
        q, k = leaf(B, H, T, D, dtype=dtype, device=device), leaf(B, H, T, D, dtype=dtype, device=device)
        return (lambda q, k: q @ k.transpose(-2, -1)), (q, k)

    def bmm_av(dtype, device):  # attention @ v: (B, H, T, T) @ (B, H, T, D)
        a, v = leaf(B, H, T, T, dtype=dtype, device=device), leaf(B, H, T, D, dtype=dtype, device=device)
        return torch.matmul, (a, v)

    def softmax(dtype, device):
        return (lambda x: F.softmax(x, dim=-1)), (leaf(B, H, T, T, dtype=dtype, device=device),)

    def masked_softmax(dtype, device):  # nanoGPT's causal attention weights
        mask = torch.tril(torch.ones(T, T)).to(device) == 0
        return (lambda x: F.softmax(x.masked_fill(mask, float("-inf")), dim=-1)), (
            leaf(B, H, T, T, dtype=dtype, device=device),
        )

    def sdpa(dtype, device):
        qkv = [leaf(B, H, T, D, dtype=dtype, device=device) for _ in range(3)]
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)), tuple(qkv)

    def layer_norm(dtype, device):
        x, w, b = (
            leaf(B, T, C, dtype=dtype, device=device),
            leaf(C, dtype=dtype, device=device),
            leaf(C, dtype=dtype, device=device),
        )
        return (lambda x, w, b: F.layer_norm(x, (C,), w, b)), (x, w, b)

    def gelu(dtype, device):
        return F.gelu, (leaf(B, T, 4 * C, dtype=dtype, device=device),)

    def gelu_tanh(dtype, device):
        return (lambda x: F.gelu(x, approximate="tanh")), (leaf(B, T, 4 * C, dtype=dtype, device=device),)

    def embedding(dtype, device):  # forward a gather, backward a scatter-add
        ids = torch.randint(0, vocab, (B, T)).to(device)
        return (lambda w: F.embedding(ids, w)), (leaf(vocab, C, dtype=dtype, device=device),)

    def cross_entropy(dtype, device):
        targets = torch.randint(0, vocab, (B * T,)).to(device)
        return (lambda logits: F.cross_entropy(logits, targets)), (leaf(B * T, vocab, dtype=dtype, device=device),)

    def matmul_large(dtype, device):  # where XLA:CPU's float64 dot shows its throughput
        return torch.matmul, (leaf(512, 768, dtype=dtype, device=device), leaf(768, 768, dtype=dtype, device=device))

    def conv2d(dtype, device):  # what verify's float64 budget counts today: a ResNet's 64-channel 3x3
        x, w = leaf(8, 64, 28, 28, dtype=dtype, device=device), leaf(64, 64, 3, 3, dtype=dtype, device=device)
        return (lambda x, w: F.conv2d(x, w, padding=1)), (x, w)

    def rms_norm(dtype, device):
        x, w = leaf(B, T, C, dtype=dtype, device=device), leaf(C, dtype=dtype, device=device)
        return (lambda x, w: F.rms_norm(x, (C,), w)), (x, w)

    def rotary(dtype, device):  # the cos/sin table computed in the step, applied to q
        positions = torch.arange(T).to(device)

        def rotate(q):
            inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2, device=device, dtype=dtype) / D))
            angles = positions.to(dtype)[:, None] * inv_freq[None, :]
            cos, sin = angles.cos(), angles.sin()
            q1, q2 = q[..., : D // 2], q[..., D // 2 :]
            return torch.cat([q1 * cos - q2 * sin, q1 * sin + q2 * cos], dim=-1)

        return rotate, (leaf(B, H, T, D, dtype=dtype, device=device),)

    def relu_squared(dtype, device):
        return (lambda x: F.relu(x).square()), (leaf(B, T, 4 * C, dtype=dtype, device=device),)

    def softcap(dtype, device):  # logits 15 * tanh(logits / 15)
        return (lambda x: 15 * torch.tanh(x / 15)), (leaf(B * T, vocab, dtype=dtype, device=device),)

    def newton_schulz(dtype, device):  # Muon's orthogonalization of a (C, 4C) gradient, 5 iterations
        def orthogonalize(g):
            a, b, c = 3.4445, -4.7750, 2.0315
            x = g / (g.norm() + 1e-7)
            for _ in range(5):
                gram = x @ x.mT
                x = a * x + (b * gram + c * gram @ gram) @ x
            return x

        return orthogonalize, (leaf(C, 4 * C, dtype=dtype, device=device),)

    def sort(dtype, device):  # forward only: top-k sampling's sort of the logits
        return (lambda x: torch.sort(x, dim=-1).values.detach()), (
            leaf(B * T, vocab, dtype=dtype, device=device, grad=False),
        )

    def cumsum(dtype, device):
        return (lambda x: torch.cumsum(x, dim=-1)), (leaf(B * T, vocab, dtype=dtype, device=device),)

    def adamw(dtype, device):  # one AdamW step on a (4C, C) weight: the optimizer's elementwise work
        weight = leaf(4 * C, C, dtype=dtype, device=device)
        weight.grad = torch.randn(4 * C, C, dtype=dtype).to(device)
        optimizer = torch.optim.AdamW([weight], lr=1e-3, weight_decay=0.1)

        def step(w):
            optimizer.step()
            return None

        return step, (weight,)

    return {
        "linear (T,C)@(C,4C)": linear,
        "lm_head (T,C)@(C,V)": lm_head,
        "bmm q@k^T": bmm_qk,
        "bmm att@v": bmm_av,
        "softmax": softmax,
        "masked_fill+softmax": masked_softmax,
        "sdpa causal": sdpa,
        "layer_norm": layer_norm,
        "gelu (erf)": gelu,
        "gelu (tanh)": gelu_tanh,
        "embedding": embedding,
        "cross_entropy": cross_entropy,
        "adamw step": adamw,
        "matmul 512x768x768": matmul_large,
        "conv2d 64ch 3x3": conv2d,
        "rms_norm": rms_norm,
        "rotary (cos/sin)": rotary,
        "relu^2": relu_squared,
        "tanh softcap": softcap,
        "newton-schulz x5": newton_schulz,
        "sort (fwd)": sort,
        "cumsum": cumsum,
    }


def measure(build, dtype, device, seconds: float, max_calls: int) -> tuple[float, float]:
    """(first call, median of the later calls), in seconds: forward, backward, synced."""
    torch.manual_seed(0)
    fn, inputs = build(dtype, device)
    on_xla = device.type == "xla"
    if on_xla:
        torch_xla.sync()
        xm.wait_device_ops()

    def call():
        out = fn(*inputs)
        grads = ()
        if out is not None and out.requires_grad:
            wrt = [x for x in inputs if x.requires_grad]
            grads = torch.autograd.grad(out.sum(), wrt)
        if on_xla:
            torch_xla.sync()
            xm.wait_device_ops()
        return grads

    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < max_calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def gpt_step(layers: int, tokens: int, width: int, heads: int, vocab: int, steps: int = 4) -> None:
    """A whole training step of fixtures/examples/tiny_gpt.py's GPT (two micro-steps, gradient
    clipping, AdamW) on the XLA device in float32 and float64: each step's compile and execute
    times (torch_xla's metrics), the first two steps compile a graph each."""
    import importlib.util
    from pathlib import Path

    import torch_xla.debug.metrics as met

    path = Path(__file__).resolve().parent.parent / "fixtures" / "examples" / "tiny_gpt.py"
    spec = importlib.util.spec_from_file_location("tiny_gpt", path)
    tiny_gpt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny_gpt)

    def seconds(metric):
        data = met.metric_data(metric)
        return data[1] / 1e9 if data else 0.0

    device = torch_xla.device()
    default = torch.get_default_dtype()
    for dtype in DTYPES:
        torch.set_default_dtype(dtype)  # what verify's float64 mode does first
        torch.manual_seed(0)
        model = tiny_gpt.GPT(vocab, 32, n_layer=layers, n_head=heads, n_embd=width).to(device)
        torch.set_default_dtype(default)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = (torch.randint(0, vocab, (max(1, tokens // 32), 32)).to(device) for _ in range(2))
        params = sum(p.numel() for p in model.parameters())
        for step in range(steps):
            compiled, executed, start = seconds("CompileTime"), seconds("ExecuteTime"), time.perf_counter()
            for _ in range(2):
                _, loss = model(x, y)
                (loss / 2).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            torch_xla.sync()
            xm.wait_device_ops()
            print(
                f"gpt {layers}x{width} ({params / 1e6:.1f} M parameters, {tokens} tokens a micro-step, two) "
                f"{str(dtype).split('.')[1]} step {step}: wall {time.perf_counter() - start:.2f} s, "
                f"compile {seconds('CompileTime') - compiled:.2f} s, execute {seconds('ExecuteTime') - executed:.3f} s",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32, help="tokens a micro-step (batch x length)")
    parser.add_argument("--width", type=int, default=192)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--vocab", type=int, default=65)
    parser.add_argument("--seconds", type=float, default=0.5, help="time each op at least this long (after 3 calls)")
    parser.add_argument("--only", default="", help="comma-separated substrings of the op names")
    parser.add_argument(
        "--gpt-step", type=int, metavar="LAYERS", help="time whole steps of a GPT of LAYERS layers instead"
    )
    args = parser.parse_args()
    if args.gpt_step:
        gpt_step(args.gpt_step, args.tokens, args.width, args.heads, args.vocab)
        return
    xla, cpu = torch_xla.device(), torch.device("cpu")
    table = cases(args.tokens, args.width, args.heads, args.vocab)
    wanted = [w for w in args.only.split(",") if w]
    print(
        f"tokens {args.tokens}, width {args.width}, heads {args.heads}, vocab {args.vocab}; "
        f"torch {torch.__version__}, torch_xla {torch_xla.__version__}, {os.cpu_count()} cores; eager on 1 thread"
    )
    header = (
        "op",
        "xla f32",
        "xla f64",
        "eager f32",
        "eager f64",
        "xla f64/f32",
        "xla/eager f64",
        "compile f32",
        "f64",
    )
    print("{:<22}{:>10}{:>10}{:>11}{:>11}{:>13}{:>15}{:>13}{:>8}".format(*header))
    print(" " * 22 + "{:>10}{:>10}{:>11}{:>11}{:>13}{:>15}{:>13}{:>8}".format("ms", "ms", "ms", "ms", "", "", "s", "s"))
    names = [name for name in table if not wanted or any(w in name for w in wanted)]
    # eager on one thread, every op before XLA's: on a shared machine eager's OpenMP threads wait
    # on each other (a (32, 192) @ (192, 768) took 40 ms on 2 threads under load, 0.2 ms on one)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    eager = {name: [measure(table[name], dtype, cpu, args.seconds, 200)[1] for dtype in DTYPES] for name in names}
    torch.set_num_threads(threads)
    rates = {}
    for name in names:
        (compile32, x32), (compile64, x64) = (measure(table[name], dtype, xla, args.seconds, 200) for dtype in DTYPES)
        e32, e64 = eager[name]
        if name in MACS:
            rates[name] = [MACS[name] / t / 1e9 for t in (x32, x64, e32, e64)]
        print(
            f"{name:<22}{x32 * 1e3:>10.3f}{x64 * 1e3:>10.3f}{e32 * 1e3:>11.3f}{e64 * 1e3:>11.3f}"
            f"{x64 / x32:>13.1f}{x64 / e64:>15.1f}{compile32:>13.2f}{compile64:>8.2f}",
            flush=True,
        )
    for name, (x32, x64, e32, e64) in rates.items():
        print(
            f"{name}: G multiply-adds/s: xla f32 {x32:.2f}, xla f64 {x64:.2f}, eager f32 {e32:.2f}, eager f64 {e64:.2f}"
        )


if __name__ == "__main__":
    main()
