"""Hydra and OmegaConf configs whose YAML says `device: cuda`, which the user keeps: the
config's device is mapped where the script reads it (torch.device, .to(), device=, a
comparison, a variable): the config parameter of @hydra.main, a DictConfig parameter,
self.cfg, OmegaConf.load and hydra.compose. The loop that moves its batches to the
config's device keeps its moves: an MpDeviceLoader would get the config's `cuda`. An `if`
on the config's device whose block the fixes emptied goes, test and all: the mapped test
only asks. [XLA104, XLA107, XLA109, XLA111, XLA201]"""

import hydra
import torch
import torch.nn as nn
from hydra import compose, initialize
from omegaconf import DictConfig, OmegaConf
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


class Trainer:
    def __init__(self, cfg: DictConfig):
        self.cfg = cfg
        self.model = nn.Linear(8, 2).to("xla" if str(cfg.training.device).startswith("cuda") else cfg.training.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg.training.lr)

    def fit(self, loader):
        for x, y in loader:
            x, y = x.to("xla" if str(self.cfg.training.device).startswith("cuda") else self.cfg.training.device), y.to("xla" if str(self.cfg.training.device).startswith("cuda") else self.cfg.training.device)
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            torch_xla.sync()


def evaluate(path):
    conf = OmegaConf.load(path)
    device = conf.device
    device = "xla" if str(device).startswith("cuda") else device
    with initialize(config_path="conf", version_base=None):
        overrides = compose(config_name="eval")
    probe = torch.ones(2, device="xla" if str(overrides.device).startswith("cuda") else overrides.device)
    return device, probe, torch.zeros(2).to("xla" if str(OmegaConf.load(path).eval_device).startswith("cuda") else OmegaConf.load(path).eval_device)


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig):
    device = torch.device("xla" if str(cfg.device).startswith("cuda") else cfg.device)
    if ("xla" if str(cfg.device).startswith("cuda") else cfg.device) == "xla":
        print("training on the GPU")
    data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randn(64, 2))
    Trainer(cfg).fit(torch.utils.data.DataLoader(data, batch_size=8))
    print(device, evaluate("eval.yaml"))


if __name__ == "__main__":
    main()
