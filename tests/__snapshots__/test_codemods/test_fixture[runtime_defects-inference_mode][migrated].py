"""An evaluation loop under torch.inference_mode(), a predict function decorated both ways, a mode
left as usual and a mode read at run time: the first three become torch.no_grad(), the last is
flagged. [XLA101, XLA109, XLA302, XLA904]"""

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

torch.__future__.set_swap_module_params_on_conversion(True)

device = torch_xla.device()
model = torch.nn.Linear(8, 2).to(device)


def evaluate(loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in pl.MpDeviceLoader(loader, device):
            correct += (model(x).argmax(1) == y).sum()
    return correct


@torch.no_grad()
def predict(x):
    return model(x)


@torch.no_grad()
def embed(x):
    return model(x)


def train_or_eval(x, training):
    with torch.inference_mode(False):
        a = model(x)
    # TODO(xla-migrate): XLA904 `torch.inference_mode(not training)`: under torch.inference_mode() torch_xla 2.9 cannot run nn.Linear or nn.LSTM on the device ("Cannot set version_counter for inference tensor"; measured on CPU PJRT, xla-migrate's docs/runtime_defects.md); with a mode read at run time, `torch.set_grad_enabled(not not training)` computes the same
    with torch.inference_mode(not training):
        return model(a)
