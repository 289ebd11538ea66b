"""Modules saved as state dicts or exported, never pickled whole."""

import torch
import torch_xla.core.xla_model as xm

xm.save(model.state_dict(), "model.pt")
xm.save(netG.state_dict(), "generator.pt")
torch.jit.save(torch.jit.script(model), "scripted.pt")
model.save_pretrained("out/")
model.load_state_dict(torch.load("model.pt", map_location="cpu"))
