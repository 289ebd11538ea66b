# fixture: unsafe-fixes
"""Training loaders get drop_last=True (an unsafe fix: it skips the last, partial batch). [XLA701]"""

import torch
from torch.utils.data import DataLoader, TensorDataset
import torch_xla

train_set = TensorDataset(torch.randn(100, 4), torch.randint(0, 2, (100,)))
val_set = TensorDataset(torch.randn(30, 4), torch.randint(0, 2, (30,)))

train_loader = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)
loader = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)  # shuffled: a training loader
spread = DataLoader(
    train_set,
    batch_size=16,
    shuffle=True,
    drop_last=True,
)
packed = DataLoader(
    train_set, batch_size=16, num_workers=2, drop_last=True
)
qualified = torch.utils.data.DataLoader(train_set, 16, drop_last=True)
val_loader = DataLoader(val_set, batch_size=32, shuffle=True)  # an evaluation loader, by its name


def get_train_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, drop_last=True)


def build_loaders(dataset):
    return {
        "fit": DataLoader(dataset, batch_size=8, shuffle=True, drop_last=True),
        "test": DataLoader(dataset, batch_size=8),
    }
