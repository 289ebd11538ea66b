"""Run with: PJRT_DEVICE=TPU python train.py"""

# torch_xla.launch starts one process per device.
print("launching")
