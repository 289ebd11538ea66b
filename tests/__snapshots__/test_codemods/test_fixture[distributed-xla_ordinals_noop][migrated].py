"""Ordinals from the runtime already; a launcher check and other variables stay."""

import os

import torch_xla.runtime as xr

rank = xr.global_ordinal()
world_size = xr.world_size()
launched = "RANK" in os.environ
seed = int(os.environ.get("SEED", 0))
distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
