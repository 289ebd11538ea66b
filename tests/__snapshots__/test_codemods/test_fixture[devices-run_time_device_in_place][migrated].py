"""A device read where the script takes it, not through a device-named variable: the
environment (`DEVICE=cuda`) and a JSON config (`"device": "cuda"`) given to torch.device,
.to() and device=, or compared with "cuda", are mapped in place; a read kept in a variable
named otherwise (`dev`) is mapped on the next line. [XLA102, XLA104, XLA111]"""

import json
import os

import torch
import torch.nn as nn
import torch_xla

with open(os.environ.get("CONFIG", "config.json")) as f:
    config = json.load(f)

model = nn.Linear(8, 2).to("xla" if str(os.getenv("DEVICE", "xla")).startswith("cuda") else os.getenv("DEVICE", "xla"))
device = torch.device("xla" if str(os.environ.get("DEVICE", "xla")).startswith("cuda") else os.environ.get("DEVICE", "xla"))
dev = os.environ["TRAIN_DEVICE"]
dev = "xla" if str(dev).startswith("cuda") else dev
batch = torch.randn(4, 8).to(dev)
eval_device = torch.device("xla" if str(config["device"]).startswith("cuda") else config["device"])
fallback = torch.device("xla" if str(config.get("device", "cuda")).startswith("cuda") else config.get("device", "cuda"))
target = torch.zeros(4, 2, device="xla" if str(config["train"]["device"]).startswith("cuda") else config["train"]["device"])
scratch = torch.empty(4, device="xla" if str(os.environ.get("SCRATCH_DEVICE") or "cuda").startswith("cuda") else os.environ.get("SCRATCH_DEVICE") or "cuda")
if ("xla" if str(config["device"]).startswith("cuda") else config["device"]) == "xla":
    print("the config names a GPU")
print(model(batch.to("xla" if str(os.environ["DEVICE"]).startswith("cuda") else os.environ["DEVICE"])).sum(), device, eval_device, fallback, target, scratch)
