# fixture: runtime=torch-tpu
"""TorchTPU: a device read from the environment or a JSON config where the script takes it
(torch.device, .to(), device=, a comparison with "cuda") becomes "tpu" when it names CUDA;
`cpu` stays the CPU. [XLA102, XLA104, XLA111]"""

import json
import os

import torch

config = json.loads(os.environ.get("TRAIN_CONFIG", "{}"))
device = torch.device("tpu" if str(os.environ.get("DEVICE", "tpu")).startswith("cuda") else os.environ.get("DEVICE", "tpu"))
dev = os.environ["TRAIN_DEVICE"]
dev = "tpu" if str(dev).startswith("cuda") else dev
x = torch.randn(4, 8, device="tpu" if str(config.get("device", "cpu")).startswith("cuda") else config.get("device", "cpu")).to(dev)
y = x.to("tpu" if str(config["eval_device"]).startswith("cuda") else config["eval_device"])
if ("tpu" if str(os.getenv("DEVICE")).startswith("cuda") else os.getenv("DEVICE")) == "tpu":
    print("the launch names a GPU")
print(device, x, y)
