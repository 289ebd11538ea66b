"""Batches padded to one fixed length, and max() that sizes nothing."""

import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_LEN = 128


def collate_fn(batch):
    return torch.stack([F.pad(seq, (0, MAX_LEN - len(seq))) for seq in batch])


def encode(tokenizer, texts):
    return tokenizer(texts, padding="max_length", max_length=MAX_LEN, truncation=True, return_tensors="pt")


conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
longest_name = max(len(name) for name in ["a", "bb"])
