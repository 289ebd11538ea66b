# fixture: runtime=torch-tpu
"""Under TorchTPU: a CUDA GradScaler made in the file goes with its calls, as for XLA (bfloat16
needs no loss scaling); one used in a way that cannot be followed stays, on the "tpu" device,
flagged. [XLA401, XLA402]"""

import torch


def train_step(model, x, optimizer):
    with torch.autocast("tpu", dtype=torch.bfloat16):
        loss = model(x).sum()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return {"model": model.state_dict()}


def kept(registry):
    # TODO(xla-migrate): XLA402 `kept_scaler` is also used in a way xla-migrate does not convert (`registry.append(kept_scaler)`), so it stays, on the TPU device; bfloat16 needs no loss scaling: remove it and write `loss.backward()` and `optimizer.step()` for its calls; see https://docs.pytorch.org/docs/stable/amp.html
    kept_scaler = torch.amp.GradScaler("tpu", init_scale=1024)
    registry.append(kept_scaler)
    return kept_scaler
