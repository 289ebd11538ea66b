# fixture: runtime=torch-tpu
"""TorchTPU: legacy typed tensors chosen on an availability flag become factories on the
"tpu" device; the availability test becomes torch.tpu's. [XLA105, XLA110]"""

import numpy as np
import torch

cuda = True if torch.tpu.is_available() else False


def batch(imgs):
    valid = torch.empty(imgs.size(0), 1, dtype=torch.float32, device=torch.device("tpu")).fill_(1.0)
    z = torch.tensor(np.random.normal(0, 1, (imgs.shape[0], 100)), dtype=torch.float32, device=torch.device("tpu"))
    real = imgs.to(torch.device("tpu"), torch.float32)
    return valid, z, real


labels = torch.tensor([1, 2, 3], dtype=torch.int64, device=torch.device("tpu"))
print(batch(torch.zeros(4, 1, 28, 28)), labels)
