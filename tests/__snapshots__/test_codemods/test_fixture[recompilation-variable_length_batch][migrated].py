"""Batches padded to their longest sequence: every new length compiles a new graph. [XLA704]"""

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
import torch_xla


def collate_fn(batch):
    tokens = [item[0] for item in batch]
    labels = torch.tensor([item[1] for item in batch])
    # TODO(xla-migrate): XLA704 `pad_sequence` pads to the longest sequence of each batch: every new length is a new shape and compiles a new graph; pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    return pad_sequence(tokens, batch_first=True, padding_value=0), labels


def pad_collate(batch):
    # TODO(xla-migrate): XLA704 the collate function pads to `max(len(seq) for seq in batch)`, the longest sequence of the batch: every new length is a new shape and compiles a new graph; pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    longest = max(len(seq) for seq in batch)
    return torch.stack([F.pad(seq, (0, longest - len(seq))) for seq in batch])


def collate_with_lengths(batch, lengths):
    # TODO(xla-migrate): XLA704 the collate function pads to `lengths.max()`, the longest sequence of the batch: every new length is a new shape and compiles a new graph; pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    width = lengths.max()
    return torch.stack([F.pad(seq, (0, width - len(seq))) for seq in batch])


def encode(tokenizer, texts):
    # TODO(xla-migrate): XLA704 `padding=True` pads to the longest sequence of each batch: every new length is a new shape and compiles a new graph; pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    return tokenizer(texts, padding=True, truncation=True, return_tensors="pt")


def encode_longest(tokenizer, texts):
    # TODO(xla-migrate): XLA704 `padding="longest"` pads to the longest sequence of each batch: every new length is a new shape and compiles a new graph; pad to one fixed length instead (`F.pad(t, (0, MAX_LEN - len(t)))`, a tokenizer's `padding="max_length", max_length=MAX_LEN`), or to a few bucket lengths; see https://docs.pytorch.org/xla/master/perf/recompilation.html
    return tokenizer(texts, padding="longest", return_tensors="pt")
