"""Saving that is already right on XLA, or is not torch.save."""

import pickle

import numpy as np
import torch
import torch_xla.core.xla_model as xm

xm.save(model.state_dict(), "model.pt")
xm.save({"model": model.state_dict(), "step": step}, "checkpoint.pt", master_only=True)
np.save("embeddings.npy", embeddings)
torch.jit.save(torch.jit.script(model), "scripted.pt")
model.save_pretrained("out/")
tokenizer.save("tokenizer.json")
with open("history.pkl", "wb") as handle:
    pickle.dump(history, handle)
cpu_state = {k: v.cpu() for k, v in model.state_dict().items()}
if xm.is_master_ordinal():
    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, "model_cpu.pt")
