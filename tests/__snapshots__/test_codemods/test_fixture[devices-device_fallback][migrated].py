"""A device option whose fallback is CUDA: `args.device or ("cuda" if ... else "cpu")` and `args.device or "cuda"` get the XLA device as their fallback; the user's own choice stays. [XLA102, XLA111]"""
import argparse

import torch
import torch_xla

parser = argparse.ArgumentParser()
parser.add_argument("--gpu-device", type=lambda name: "xla" if name.startswith("cuda") else name)
args = parser.parse_args()
device = args.gpu_device or "xla"
eval_device: str = args.gpu_device or "xla"
print(device, eval_device)
