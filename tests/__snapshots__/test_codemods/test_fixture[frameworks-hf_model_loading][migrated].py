"""Models loaded with flash-attention, a device map and bitsandbytes quantization. [XLA825]"""

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


def load(name):
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa", torch_dtype=torch.bfloat16)
    # TODO(xla-migrate): XLA825 `device_map="auto"` dispatches the layers over CUDA devices and the CPU (Accelerate): drop it and move the model with `.to(torch_xla.device())`, or let the Trainer place it; see https://huggingface.co/docs/transformers/perf_train_tpu
    mapped = AutoModelForCausalLM.from_pretrained(name, device_map="auto")
    # TODO(xla-migrate): XLA825 `device_map={"": 0}` dispatches the layers over CUDA devices and the CPU (Accelerate): drop it and move the model with `.to(torch_xla.device())`, or let the Trainer place it; `quantization_config=BitsAndBytesConfig(load_in_4bit=True)` quantizes with bitsandbytes' CUDA kernels: load the weights in bfloat16 (`torch_dtype=torch.bfloat16`) instead; see https://huggingface.co/docs/transformers/perf_train_tpu
    quantized = AutoModelForCausalLM.from_pretrained(
        name, quantization_config=BitsAndBytesConfig(load_in_4bit=True), device_map={"": 0}
    )
    # TODO(xla-migrate): XLA825 `load_in_8bit=True` quantizes with bitsandbytes' CUDA kernels: load the weights in bfloat16 (`torch_dtype=torch.bfloat16`) instead; see https://huggingface.co/docs/transformers/perf_train_tpu
    eight = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)
    return model, mapped, quantized, eight
