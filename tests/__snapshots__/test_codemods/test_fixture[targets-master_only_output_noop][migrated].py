# fixture: target=multiprocess
import torch_xla.core.xla_model as xm

print("imported")


def report(step, loss):
    if xm.is_master_ordinal(local=False):
        print(step, loss)
    message = f"{step}: {loss}"
    return message
