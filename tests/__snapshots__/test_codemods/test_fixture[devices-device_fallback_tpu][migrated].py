# fixture: runtime=torch-tpu
"""A device option whose fallback is CUDA: `args.device or ("cuda" if ... else "cpu")` and `args.device or "cuda"` get TorchTPU's device as their fallback; the user's own choice stays. [XLA102, XLA111]"""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu-device", type=lambda name: "tpu" if name.startswith("cuda") else name)
args = parser.parse_args()
device = args.gpu_device or "tpu"
eval_device: str = args.gpu_device or "tpu"
print(device, eval_device)
