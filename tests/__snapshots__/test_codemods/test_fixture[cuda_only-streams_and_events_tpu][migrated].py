# fixture: runtime=torch-tpu
"""Under TorchTPU: CUDA streams and events become torch.tpu's, however imported; what torch.tpu
does not mirror (ExternalStream, StreamContext) is flagged. [XLA801, XLA802]"""

import torch
import torch as t

side = torch.tpu.Stream(priority=-1)
start = torch.tpu.Event(enable_timing=True)
end = torch.tpu.Event(enable_timing=True)

x = torch.randn(256, 256)
start.record()
with torch.tpu.stream(side):
    y = x @ x
torch.tpu.current_stream().wait_stream(side)
t.tpu.default_stream().wait_stream(side)
end.record()
print("matmul took", start.elapsed_time(end), "ms")

# TODO(xla-migrate): XLA801 `torch.cuda.ExternalStream` is a CUDA stream API that `torch.tpu` does not mirror: use `torch.tpu.Stream`, `torch.tpu.stream(s)` and `torch.tpu.current_stream()`, or remove it and run the code it wrapped in order; see https://pypi.org/project/torch-tpu/
external = torch.cuda.ExternalStream(stream_ptr)
# TODO(xla-migrate): XLA801 `external` holds a `torch.cuda.ExternalStream`, which is a CUDA stream API that `torch.tpu` does not mirror: use `torch.tpu.Stream`, `torch.tpu.stream(s)` and `torch.tpu.current_stream()`, or remove it and run the code it wrapped in order; see https://pypi.org/project/torch-tpu/
external.synchronize()
