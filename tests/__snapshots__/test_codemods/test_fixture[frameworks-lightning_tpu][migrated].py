# fixture: runtime=torch-tpu
"""Under TorchTPU: Lightning has no accelerator for the tpu device, so Trainers and Fabrics on a
GPU or on "auto" are flagged, not converted; a CPU Trainer is left. [XLA820]"""

import lightning as L
from lightning.fabric import Fabric

# TODO(xla-migrate): XLA820 Lightning's Trainer has no accelerator for TorchTPU's `tpu` device (lightning 2.6: its "tpu" accelerator is PyTorch/XLA's, and "auto" trains on the CPU without torch_xla): migrate this script with `--runtime torch-xla`, or train without the Trainer on `torch.device("tpu")`; see docs/frameworks.md
trainer = L.Trainer(accelerator="gpu", devices=1, precision="16-mixed")
# TODO(xla-migrate): XLA820 Lightning's Fabric has no accelerator for TorchTPU's `tpu` device (lightning 2.6: its "tpu" accelerator is PyTorch/XLA's, and "auto" trains on the CPU without torch_xla): migrate this script with `--runtime torch-xla`, or train without the Fabric on `torch.device("tpu")`; see docs/frameworks.md
fabric = Fabric(precision="bf16-mixed")
cpu_trainer = L.Trainer(accelerator="cpu")
