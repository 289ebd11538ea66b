"""A model run before its move, its output kept, and run again after the optimizer takes its
parameters: it cannot move before the optimizer, and swapping raises: flagged. [XLA103, XLA109]"""

import torch
from transformers import AutoModelForSequenceClassification
import torch_xla

torch.__future__.set_swap_module_params_on_conversion(True)


def fine_tune(batch, probe):
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    before = model(**batch).logits
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    print(before, model(**probe).logits)
    # TODO(xla-migrate): XLA109 `model.cuda()` after `before = model(**batch).logits` ran the module and kept its output: its graph holds the parameters, so swapping them on conversion raises ("_apply(): Couldn't swap"); move the module before running it or before anything takes its parameters, or `del` the output before the move
    model.to(torch_xla.device())
    return model, optimizer
