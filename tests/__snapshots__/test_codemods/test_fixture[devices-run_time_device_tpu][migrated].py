# fixture: runtime=torch-tpu
"""TorchTPU: a device named at run time (--device cuda, DEVICE=cuda, a config) becomes "tpu"
where the script reads it; cpu stays the CPU. [XLA111]"""

import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", help="where to train", type=lambda name: "tpu" if name.startswith("cuda") else name)
parser.add_argument("--eval-device", type=lambda name: "tpu" if name.startswith("cuda") else name, choices=["cpu", "cuda", "tpu"], default="cpu")
args = parser.parse_args()

device = os.environ.get("DEVICE", "cpu")
device = "tpu" if str(device).startswith("cuda") else device
config = {"train_device": "cpu"}
train_device = config["train_device"]
train_device = "tpu" if str(train_device).startswith("cuda") else train_device
print(args.device, args.eval_device, device, train_device)
