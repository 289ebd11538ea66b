"""XLA82x: training frameworks whose device, precision and distribution are arguments.

Much GPU training code never calls ``.cuda()``: Lightning's ``Trainer`` / ``Fabric``,
Hugging Face's ``TrainingArguments`` and Accelerate's ``Accelerator`` place the model and
the data themselves, from their arguments. These rules give those arguments the values the
framework's own XLA path takes (the migration guide's "Device Handling" and "Automatic Mixed
Precision"; Lightning's TPU accelerator: https://lightning.ai/docs/pytorch/stable/accelerators/tpu.html),
and flag what has no TPU form with what to do. The framework's code is read, never
imported: a call is known by what its name refers to (``import lightning as L``,
``from pytorch_lightning import Trainer`` and ``lightning.fabric.Fabric`` alike). What the
frameworks call ``torch.cuda`` for inside a ``LightningModule`` is the other families'.

Under ``--runtime torch-tpu``: none of lightning 2.6, transformers 4.57 or accelerate 1.15
knows TorchTPU's ``tpu`` device (their "tpu" is PyTorch/XLA's), so the calls are flagged
with what to do instead of converted (docs/frameworks.md).
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   lightning.py     XLA820 lightning-accelerator, XLA821 lightning-precision, XLA822 lightning-strategy,
#                    XLA823 fabric-setup-params
#   hugging_face.py  XLA824 hf-training-arguments, XLA825 hf-model-loading, XLA826 accelerate-mixed-precision
#   accelerate_config.py  XLA827 accelerate-config (the YAML is converted by codemods/frameworks/accelerate_config.py)
#   lightning_config.py   XLA828 lightning-config (the YAML is converted by codemods/frameworks/lightning_config.py)
#   common.py        the frameworks' names and the argument edits the rules share
