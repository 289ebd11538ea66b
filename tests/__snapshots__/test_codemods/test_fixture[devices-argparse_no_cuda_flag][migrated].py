"""An argparse `--no-cuda` flag that picks the device, as in pytorch/examples' MNIST. [XLA101, XLA102, XLA105]"""

import argparse

import torch
import torch_xla


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N")
    parser.add_argument("--no-cuda", action="store_true", default=False,
                        help="disables CUDA training")
    parser.add_argument("--seed", type=int, default=1, metavar="S")
    return parser.parse_args()


def main():
    args = parse_args()
    use_cuda = not args.no_cuda and bool(torch_xla.device_count())

    torch.manual_seed(args.seed)

    device = torch.device("xla" if use_cuda else "cpu")  # pick the GPU when allowed
    train_kwargs = {"batch_size": args.batch_size}
    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "shuffle": True}
        train_kwargs.update(cuda_kwargs)
    return device, train_kwargs


def other_spelling(args):
    # The same choice, written the other way round.
    device = "cpu" if args.no_cuda else "xla"
    return torch.zeros(3).to(device)


if __name__ == "__main__":
    main()
