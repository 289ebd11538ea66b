"""CUDA checks that guard what only CUDA has stay CUDA checks (off on XLA); others become XLA checks.

In the style of nanoGPT's model.py / train.py and the DCGAN example. [XLA102, XLA104, XLA105, XLA301]
"""

import inspect

import torch
import torch.nn as nn
import torch_xla

device = 'xla'
device_type = 'xla' if 'xla' in device else 'cpu'  # for later use in torch.autocast


def configure_optimizers(model, weight_decay, learning_rate, betas, device_type):
    params = [p for p in model.parameters() if p.requires_grad]
    fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
    use_fused = fused_available and device_type == 'cuda'
    extra_args = dict(fused=True) if use_fused else dict()
    optimizer = torch.optim.AdamW(params, lr=learning_rate, betas=betas, **extra_args)
    print(f"using fused AdamW: {use_fused}")
    return optimizer


class Generator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.ConvTranspose2d(100, 64, 4, 1, 0, bias=False), nn.Tanh())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


def get_batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    if device_type == 'xla':
        # pin arrays x,y, which allows us to move them to GPU asynchronously (non_blocking=True)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


def make_optimizer(model, args):
    return torch.optim.Adam(model.parameters(), lr=args.lr, capturable=torch.device(args.device).type == "cuda")


def step_timing(x):
    if x.is_xla:
        torch_xla.sync(wait=True)  # this one means "wait for the device": it becomes an XLA check
    return x
