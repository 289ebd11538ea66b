"""A data loader that copies batches to the GPU on a side stream, as timm's PrefetchLoader
does: the library code a training script imports."""

import torch


class PrefetchLoader:
    def __init__(self, loader, mean=0.5, std=0.25):
        self.loader = loader
        self.mean = torch.tensor([mean]).cuda().view(1, 1)
        self.std = torch.tensor([std]).cuda().view(1, 1)

    def __iter__(self):
        stream = torch.cuda.Stream()
        first = True
        for next_input, next_target in self.loader:
            with torch.cuda.stream(stream):
                next_input = next_input.cuda(non_blocking=True)
                next_target = next_target.cuda(non_blocking=True)
                next_input = next_input.float().sub_(self.mean).div_(self.std)
            if not first:
                yield input, target
            else:
                first = False
            torch.cuda.current_stream().wait_stream(stream)
            input, target = next_input, next_target
            input.record_stream(torch.cuda.current_stream())
            target.record_stream(torch.cuda.current_stream())
        yield input, target

    def __len__(self):
        return len(self.loader)
