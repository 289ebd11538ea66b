"""apex amp where xla-migrate cannot place bfloat16 autocast: an opt level named on the command
line (amp.initialize under a condition, too) and O3, a whole model in float16; each is flagged
with what to do, and stays with the apex import, while scale_loss (a loss divided for
accumulation, delay_unscale) still becomes the backward pass and the branches it made the
same collapse. [XLA103, XLA109, XLA201, XLA408]"""

import argparse

import torch
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

try:
    from apex import amp
except ImportError:
    amp = None

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--opt-level", default="O1")
args = parser.parse_args()

model = torch.nn.Linear(16, 1).to(torch_xla.device())
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
if args.fp16:
    # TODO(xla-migrate): XLA408 `amp.initialize(model, optimizer, opt_level=args.opt_level)` is apex mixed precision and its opt level is chosen at run time (`args.opt_level`): remove it (without apex it returns its models and optimizers as they are) and put the forward pass of O1 / O2 in `with torch.autocast("xla", dtype=torch.bfloat16):` (O0 is float32; for O3's float16 model, `model.to(torch.bfloat16)` or that autocast); XLA autocast computes in bfloat16, which needs no loss scaling; see https://docs.pytorch.org/xla/master/perf/amp.html
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)


def train(batches, accum):
    for step, batch in enumerate(batches):
        loss = model(batch).sum()
        (loss / accum).backward()
        if step % accum == 0:
            optimizer.step()
            torch_xla.sync()
            optimizer.zero_grad()


def evaluate(net, opt, batch):
    # O3 is a whole model in float16: a person chooses its bfloat16 counterpart
    # TODO(xla-migrate): XLA408 `amp.initialize(net, opt, opt_level="O3")` is apex mixed precision and O3 trains the whole model in float16 (apex calls `.half()` on it): remove it (without apex it returns its models and optimizers as they are) and choose its bfloat16 counterpart: `model.to(torch.bfloat16)` (the whole model in bfloat16, as O3 has it in float16) or the forward pass in `with torch.autocast("xla", dtype=torch.bfloat16):`; XLA autocast computes in bfloat16, which needs no loss scaling; see https://docs.pytorch.org/xla/master/perf/amp.html
    net, opt = amp.initialize(net, opt, opt_level="O3")
    return net(batch)
