# fixture: target=spmd
"""A script that builds its model on the device at import, then trains under __main__:
SPMD turns on right after the imports, before anything is on the device. [XLA101, XLA109, XLA670, XLA671, XLA201]"""
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()
xs.set_global_mesh(xs.get_1d_mesh("data"))

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
model = torch.nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

if __name__ == "__main__":
    for x, y in [(torch.randn(8, 4), torch.randn(8, 1))]:
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
