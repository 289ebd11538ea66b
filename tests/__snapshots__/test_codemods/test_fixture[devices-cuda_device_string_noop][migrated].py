"""Strings that mention CUDA but name no device: messages, comments, run names, CPU defaults."""

import argparse
import logging

import torch

logger = logging.getLogger(__name__)

# Trained on "cuda" originally; this copy runs on the CPU.
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", help='e.g. "cpu" or "xla"')
parser.add_argument("--run-name", default="cuda-baseline")
args = parser.parse_args()

print("cuda")
logger.info("cuda")
device = torch.device(args.device)
run = {"name": "cuda_vs_xla", "device": "cpu"}
backend_name = "gloo"
x = torch.zeros(2).to(device)
