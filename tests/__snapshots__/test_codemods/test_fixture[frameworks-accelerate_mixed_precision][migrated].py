"""Accelerate set up for float16 on CUDA GPUs. [XLA826]"""

from accelerate import Accelerator
import accelerate

accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=2)
other = accelerate.Accelerator(mixed_precision="bf16")
