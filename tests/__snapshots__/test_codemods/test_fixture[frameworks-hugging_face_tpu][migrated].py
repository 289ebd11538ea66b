# fixture: runtime=torch-tpu
"""Under TorchTPU: transformers and Accelerate know no TorchTPU device, so their set-ups are
flagged, not converted; flash-attention still becomes SDPA. [XLA824, XLA825, XLA826]"""

from accelerate import Accelerator
from transformers import AutoModel, TrainingArguments

# TODO(xla-migrate): XLA824 transformers' Trainer picks its device itself and knows no TorchTPU device (transformers 4.57: its TPU path is PyTorch/XLA's), so it would train on the CPU: migrate this script with `--runtime torch-xla`, or train without it on `torch.device("tpu")`; see docs/frameworks.md
args = TrainingArguments(output_dir="out", fp16=True)
# TODO(xla-migrate): XLA826 Accelerate picks its device itself and knows no TorchTPU device (accelerate 1.15: its TPU path is PyTorch/XLA's), so it would train on the CPU: migrate this script with `--runtime torch-xla`, or train without it on `torch.device("tpu")`; see docs/frameworks.md
accelerator = Accelerator(mixed_precision="fp16")
model = AutoModel.from_pretrained("name", attn_implementation="sdpa")
