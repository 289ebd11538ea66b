"""A Fabric loop on a CUDA GPU in float16 mixed precision, the optimizer built before
fabric.setup() as Fabric's examples do. [XLA201, XLA820, XLA821, XLA823]"""

import torch
from lightning.fabric import Fabric
import torch_xla


def train(model, loader, epochs):
    fabric = Fabric(accelerator="tpu", devices=1, precision="32-true")
    fabric.launch()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    # set up both together
    torch.__future__.set_swap_module_params_on_conversion(True)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(loader)
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            fabric.backward(loss)
            optimizer.step()
            torch_xla.sync()


def second_model(fabric, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return fabric.setup(model, optimizer)
