"""A whole training script in the style of pytorch/examples' ImageNet: many device idioms at once. [XLA101, XLA103, XLA105, XLA107, XLA108, XLA109, XLA201, XLA301, XLA701, XLA899]"""

import argparse
import os
import time

import torch
import torch.nn as nn
import torch.optim
import torch.utils.data
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("--gpu", default=None, type=int, help="GPU id to use.")
parser.add_argument("--resume", default="", type=str, metavar="PATH")
parser.add_argument("--seed", default=None, type=int)


def main():
    args = parser.parse_args()
    if args.seed is not None:
        torch.manual_seed(args.seed)

    if bool(torch_xla.device_count()):
        device = torch_xla.device()
    else:
        device = torch.device("cpu")

    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
    model = model.to(torch_xla.device())  # model to the chosen GPU
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9)

    if args.resume and os.path.isfile(args.resume):
        if args.gpu is None:
            checkpoint = torch.load(args.resume, map_location="cpu")
        else:
            # TODO(xla-migrate): XLA899 `"cuda:{}"` names a CUDA device: on XLA use `torch_xla.device()` (or `"xla"`), and load checkpoints with `map_location="cpu"`; see https://docs.pytorch.org/xla/master/learn/migration-to-xla-on-tpus.html
            loc = "cuda:{}".format(args.gpu)
            checkpoint = torch.load(args.resume, map_location=loc)
        model.load_state_dict(checkpoint["state_dict"])

    dataset = torch.utils.data.TensorDataset(torch.randn(64, 3, 8, 8), torch.randint(0, 10, (64,)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2)

    end = time.time()
    for images, target in loader:
        images = images.to(torch_xla.device(), non_blocking=True)
        target = target.to(device, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
    torch_xla.sync(wait=True)
    print("epoch time", time.time() - end)


if __name__ == "__main__":
    main()
