# fixture: unsafe-fixes
"""Hugging Face padding to the longest, where the model takes the attention mask, with
--unsafe-fixes: padded to a multiple of 64 instead, by a tokenizer call and by each padding
collator. [XLA101, XLA201, XLA302, XLA704]"""

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
    return tokenizer(texts, padding=True, truncation=True, return_tensors="pt", pad_to_multiple_of=64)


def encode_longest(tokenizer, texts):
    return tokenizer(
        texts,
        padding="longest",
        return_tensors="pt",
        pad_to_multiple_of=64,
    )


def collators(tokenizer):
    return (
        DataCollatorWithPadding(tokenizer, pad_to_multiple_of=64),
        DataCollatorForLanguageModeling(tokenizer, mlm=False, pad_to_multiple_of=64),
        DataCollatorForSeq2Seq(tokenizer, model=model, padding="longest", pad_to_multiple_of=64),
    )


def train(loader):
    for batch in pl.MpDeviceLoader(loader, device):
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch_xla.sync()
