"""Blocks the fixes emptied: an `if` whose statements were all CUDA settings goes whole when its
test only asks (`if torch.cuda.is_available(): cudnn.benchmark = True`), so does an `else` or a
last `elif` left with `pass`; a test that may act, an `else` that still does something, a comment
on the `if` line, a loop or a `with` keep their `pass`. [XLA105, XLA107]"""

import argparse

import torch
import torch_xla

parser = argparse.ArgumentParser()
parser.add_argument("--deterministic", action="store_true")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(args.seed)

if args.deterministic:
    torch.use_deterministic_algorithms(True)

if args.deterministic:
    torch.use_deterministic_algorithms(True)

if args.seed > 0:
    if bool(torch_xla.device_count()):
        torch_xla.manual_seed(args.seed)


def gpu_ready():
    print("checking the GPU")
    return bool(torch_xla.device_count())


if gpu_ready():  # the call prints: the test stays
    pass

if bool(torch_xla.device_count()):
    pass
else:
    print("no GPU: this will be slow")

if bool(torch_xla.device_count()):  # fast kernels
    pass

for _ in range(3):
    pass

with torch.no_grad():
    pass

model = torch.nn.Linear(4, 2)
