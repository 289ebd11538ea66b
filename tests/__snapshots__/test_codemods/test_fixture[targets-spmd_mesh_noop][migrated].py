# fixture: target=spmd
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

from train import main

if __name__ == "__main__":
    xr.use_spmd()
    xs.set_global_mesh(xs.get_1d_mesh("data"))
    main()
