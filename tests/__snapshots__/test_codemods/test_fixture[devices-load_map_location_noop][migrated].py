"""Loading that already maps to the CPU, or is not torch.load at all."""

import json
import pickle

import numpy as np
import torch

state = torch.load("ckpt.pt", map_location="cpu")
state = torch.load("ckpt.pt", "cpu", weights_only=True)
state = torch.load("ckpt.pt", map_location=torch.device("cpu"))
state = torch.load("ckpt.pt", map_location=lambda storage, loc: storage)
kwargs = {"map_location": "cpu"}
state = torch.load("ckpt.pt", **kwargs)

with open("meta.json") as f:
    meta = json.load(f)
with open("cache.pkl", "rb") as f:
    cache = pickle.load(f)
array = np.load("features.npy")
model = torch.hub.load("pytorch/vision", "resnet18")
