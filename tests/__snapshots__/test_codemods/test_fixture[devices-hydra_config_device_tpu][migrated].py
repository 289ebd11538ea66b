# fixture: runtime=torch-tpu
"""TorchTPU: a Hydra or OmegaConf config's device, `cuda` in its YAML, becomes "tpu" where
the script reads it: torch.device(cfg.device), .to(cfg.training.device), device=, a
variable; `cpu` stays the CPU. An `if` on the config's device or on torch.cuda's count whose
block the fixes emptied goes, test and all. [XLA104, XLA105, XLA107, XLA109, XLA111]"""

import hydra
import torch
from omegaconf import DictConfig, OmegaConf

torch.__future__.set_swap_module_params_on_conversion(True)


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig):
    device = torch.device("tpu" if str(cfg.device).startswith("cuda") else cfg.device)
    model = torch.nn.Linear(8, 2).to("tpu" if str(cfg.training.device).startswith("cuda") else cfg.training.device)
    eval_device = OmegaConf.load("eval.yaml").device
    eval_device = "tpu" if str(eval_device).startswith("cuda") else eval_device
    x = torch.randn(4, 8, device="tpu" if str(cfg.device).startswith("cuda") else cfg.device)
    print(model(x).sum(), device, eval_device)


if __name__ == "__main__":
    main()
