"""Hugging Face padding to the longest, where the model takes the attention mask: a tokenizer
call and each padding collator, marked with the fix held back (pad_to_multiple_of=64: dropout's
masks are drawn over the padded shape). [XLA101, XLA201, XLA302, XLA704]"""

import torch
from transformers import AutoModelForSequenceClassification, DataCollatorForLanguageModeling
from transformers import DataCollatorWithPadding
from transformers.data.data_collator import DataCollatorForSeq2Seq
import torch_xla
import torch_xla.distributed.parallel_loader as pl

device = torch_xla.device()
model = AutoModelForSequenceClassification.from_pretrained("model").to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


def encode(tokenizer, texts):
    # TODO(xla-migrate): XLA704 `padding=True` pads each batch to its longest sequence, a new shape and graph for every length: `pad_to_multiple_of=64` pads to a few lengths instead (unsafe: the model takes the attention mask, so the added padding changes no loss, but dropout draws its random masks over the padded shape)
    return tokenizer(texts, padding=True, truncation=True, return_tensors="pt")


def encode_longest(tokenizer, texts):
    # TODO(xla-migrate): XLA704 `padding="longest"` pads each batch to its longest sequence, a new shape and graph for every length: `pad_to_multiple_of=64` pads to a few lengths instead (unsafe: the model takes the attention mask, so the added padding changes no loss, but dropout draws its random masks over the padded shape)
    return tokenizer(
        texts,
        padding="longest",
        return_tensors="pt",
    )


def collators(tokenizer):
    # TODO(xla-migrate): XLA704 `DataCollatorWithPadding` pads each batch to its longest sequence, a new shape and graph for every length: `pad_to_multiple_of=64` pads to a few lengths instead (unsafe: the model takes the attention mask, so the added padding changes no loss, but dropout draws its random masks over the padded shape)
    return (
        DataCollatorWithPadding(tokenizer),
        DataCollatorForLanguageModeling(tokenizer, mlm=False),
        DataCollatorForSeq2Seq(tokenizer, model=model, padding="longest"),
    )


def train(loader):
    for batch in pl.MpDeviceLoader(loader, device):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
