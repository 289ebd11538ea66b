"""C++-only extensions run on the host, and other `load` calls are not extension builds."""

import torch
from torch.utils.cpp_extension import CppExtension, load

cpu_ext = load(name="cpu_ext", sources=["cpu_ops.cpp"], extra_cflags=["-O3"])
state = torch.load("ckpt.pt", map_location="cpu")
ext_modules = [CppExtension("cpu_ops", ["cpu_ops.cpp"])]
