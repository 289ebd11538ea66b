"""Devices the user chooses with a flag keep their CPU branch; the availability test means the accelerator. [XLA101, XLA102, XLA105, XLA109]"""

import argparse

import torch
import torch.nn as nn
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
    parser.add_argument("--no-accel", action="store_true", help="disables accelerator")
    parser.add_argument("--cuda", action="store_true", help="use CUDA")
    return parser.parse_args()


def main():
    args = parse_args()
    use_cuda = not args.no_cuda and bool(torch_xla.device_count())
    device = torch.device("xla" if use_cuda else "cpu")

    use_accel = not args.no_accel and bool(torch_xla.device_count())
    if use_accel:
        device = torch.device("xla")
    else:
        device = torch.device("cpu")

    lm_device = torch.device("xla" if args.cuda else "cpu")
    eval_device = "xla" if args.cuda else "cpu"
    auto_device = "xla"  # "use the GPU if there is one"
    model = nn.Linear(4, 2).to(device)
    return model, lm_device, eval_device, auto_device


if __name__ == "__main__":
    main()
