"""Language models and Hugging Face-driven trainers (issue 40): instruction tuning with the HF
Trainer, GPT trainers with torch.compile, accelerate / peft / trl / diffusers example scripts.

Models are never downloaded: the generators build tiny ones from a config (hidden 32-64, 2 layers)
with random weights and save_pretrained them into a folder, with a byte-level BPE tokenizer
trained offline with `tokenizers` on generated text and saved as a PreTrainedTokenizerFast, so
that Auto*.from_pretrained(folder) works. Where a script names a hub id, a local HF cache
(HF_HOME={case}/hf, hub/models--ORG--NAME/snapshots/<hash>/, refs/main) is laid out and
HF_HUB_OFFLINE=1 set.
"""

from __future__ import annotations

import json
import os

import numpy as np
from corpus import case, pin

REPOS = {
    "tatsu-lab/stanford_alpaca": "761dc5bfbdeeffa89b8bff5d038781a4055f796a",
    "karpathy/llm.c": "f1e2ace651495b74ae22d45d1723443fd00ecd3a",
    "KellerJordan/modded-nanogpt": "f411b3d346aa52d3504324ca93c230fd84c6c07f",
    "huggingface/accelerate": "16cb6eb80dd9aa8b4df1a63ef57863e455d53b83",
    "huggingface/peft": "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40",
}
pin(REPOS)

# ---------------------------------------------------------------------------- generators

_WORDS = (
    "the a an of to in and is was for on with as by at from that this it be are or not which "
    "model data train learn write give list find name explain describe summarize translate answer "
    "question story poem code number word sentence text short long good best first small large "
    "red blue green cat dog tree river city house book music time day year people world water"
).split()


def _sentence(rng, lo=4, hi=14):
    return " ".join(rng.choice(_WORDS, rng.integers(lo, hi))).capitalize() + "."


# the prompt templates of instruction-tuning scripts (stanford_alpaca's PROMPT_DICT): in the
# tokenizer's corpus so that a prompt is tens of tokens, not hundreds of bytes
_TEMPLATES = [
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.",
    "### Instruction:\n",
    "### Input:\n",
    "### Response:",
    "### Question:",
    "### Answer:",
]


def _corpus(rng, lines=400):
    return [_sentence(rng) for _ in range(lines)] + _TEMPLATES * 20


def _train_tokenizer(folder, texts, vocab=512, bos="<s>", eos="</s>", unk="<unk>", pad=None, extra_config=None):
    """A byte-level BPE trained on TEXTS, saved as a PreTrainedTokenizerFast in FOLDER."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = [t for t in (unk, bos, eos, pad) if t]
    tok = Tokenizer(models.BPE(unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    kw = {k: v for k, v in (("bos_token", bos), ("eos_token", eos), ("unk_token", unk), ("pad_token", pad)) if v}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **kw, **(extra_config or {}))
    fast.save_pretrained(folder)
    return fast


def gen_tiny_llama(path, hidden=64, layers=2, heads=4, vocab=512, pad=None, seed=0):
    """A LlamaForCausalLM (hidden 64, 2 layers, random weights) and its BPE tokenizer, in PATH.
    pad=None: no pad token (as Llama's own tokenizer; stanford_alpaca adds [PAD] itself)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    tok = _train_tokenizer(path, _corpus(rng), vocab=vocab, pad=pad)
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=256,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        torch_dtype="float32",
    )
    LlamaForCausalLM(cfg).save_pretrained(path, safe_serialization=True)


def gen_alpaca_json(path, n=64, seed=1):
    """An alpaca_data.json: a JSON list of {instruction, input, output}, a third with no input."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "instruction": _sentence(rng),
            "input": _sentence(rng) if i % 3 else "",
            "output": " ".join(_sentence(rng) for _ in range(rng.integers(1, 3))),
        }
        for i in range(n)
    ]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


def gen_llmc_shards(path, tokens=40_000, vocab=50257, seed=2, name="tiny_{split}.bin"):
    """llm.c's dev/data/<name>/<name>_{train,val}.bin: a header of 256 int32 (magic 20240520,
    version 1, token count) and the tokens as uint16 (what its _peek_data_shard/_load_data_shard read)."""
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split in ("val", "train"):
        toks = rng.integers(0, vocab, tokens).astype(np.uint16)
        header = np.zeros(256, dtype=np.int32)
        header[:3] = (20240520, 1, len(toks))
        with open(os.path.join(path, name.format(split=split)), "wb") as f:
            f.write(header.tobytes() + toks.tobytes())


def _hub_snapshot(hf_home, repo_id, revision="0123456789abcdef0123456789abcdef01234567"):
    """HF_HOME/hub/models--ORG--NAME/snapshots/<hash>/ and refs/main: where from_pretrained(repo_id)
    looks under HF_HUB_OFFLINE=1. Returns the snapshot folder."""
    root = os.path.join(hf_home, "hub", "models--" + repo_id.replace("/", "--"))
    snap = os.path.join(root, "snapshots", revision)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(root, "refs"), exist_ok=True)
    with open(os.path.join(root, "refs", "main"), "w") as f:
        f.write(revision)
    return snap


def gen_tiny_bert_hub(path, repo_id="bert-base-cased", hidden=32, layers=2, heads=2, vocab=400, seed=3):
    """A BertForSequenceClassification-loadable BertModel (hidden 32, 2 layers, random weights)
    and a WordPiece tokenizer trained on generated sentences, as the hub snapshot of REPO_ID in
    the HF cache PATH (HF_HOME)."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForPreTraining, BertTokenizerFast

    snap = _hub_snapshot(path, repo_id)
    rng = np.random.default_rng(seed)
    wp = BertWordPieceTokenizer(lowercase=False)
    wp.train_from_iterator(_corpus(rng), vocab_size=vocab)
    wp.save_model(snap)  # vocab.txt
    tok = BertTokenizerFast(vocab_file=os.path.join(snap, "vocab.txt"), do_lower_case=False, model_max_length=128)
    tok.save_pretrained(snap)
    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden * 2,
        max_position_embeddings=128,
    )
    BertForPreTraining(cfg).save_pretrained(snap, safe_serialization=True)


def gen_text_jsonl(path, n_train=48, n_test=8, seed=4):
    """A local dataset folder: train.jsonl and test.jsonl of {"text": ...} (openassistant-guanaco's
    one column, "### Human: ... ### Assistant: ...")."""
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split, n in (("train", n_train), ("test", n_test)):
        with open(os.path.join(path, f"{split}.jsonl"), "w") as f:
            for _ in range(n):
                text = f"### Human: {_sentence(rng)} ### Assistant: {_sentence(rng)} {_sentence(rng)}"
                f.write(json.dumps({"text": text}) + "\n")


GENERATORS = {
    "tiny_llama": gen_tiny_llama,
    "alpaca_json": gen_alpaca_json,
    "llmc_shards": gen_llmc_shards,
    "tiny_bert_hub": gen_tiny_bert_hub,
    "text_jsonl": gen_text_jsonl,
}

# ---------------------------------------------------------------------------- stand-ins

# stanford_alpaca's utils.py imports openai (for generate_instruction.py's calls); training reads
# only utils.jload. The stand-in has the names utils reads at import.
_OPENAI = '''"""A stand-in for openai (0.x): the names stanford_alpaca's utils.py reads at import."""
organization = None


class _OpenAIObject(dict):
    pass


class openai_object:  # noqa: N801  (a module in openai 0.x)
    OpenAIObject = _OpenAIObject
'''

# tiktoken (not on this machine; its get_encoding("gpt2") downloads the BPE files): llm.c's
# train_gpt2.py uses the encoding only to write gpt2_tokenizer.bin (--write_tensors 1) and to
# decode samples (--sample_every > 0); the data are token ids already. The stand-in has GPT-2's
# vocabulary size and end-of-text id; decode gives the ids as text.
_TIKTOKEN = '''"""A stand-in for tiktoken: the gpt2 encoding's sizes, no BPE (nothing is downloaded)."""


class Encoding:
    def __init__(self, name, n_vocab=50257, eot_token=50256):
        self.name, self.n_vocab, self.eot_token = name, n_vocab, eot_token
        self._special_tokens = {"<|endoftext|>": eot_token}

    def encode(self, text, allowed_special=(), disallowed_special=()):
        return [b % 256 for b in text.encode()]

    def encode_ordinary(self, text):
        return self.encode(text)

    def decode(self, tokens):
        return " ".join(str(t) for t in tokens)

    def decode_bytes(self, tokens):
        return self.decode(tokens).encode()


def get_encoding(name):
    return Encoding(name)
'''

# datasets and evaluate (not on this machine; GLUE MRPC would be downloaded): accelerate's examples
# call load_dataset("nyu-mll/glue", "mrpc") and evaluate.load("glue", "mrpc"); peft's examples
# load_dataset(a local folder of train.jsonl/test.jsonl, as gen_text_jsonl writes it)
# call load_dataset("nyu-mll/glue", "mrpc") and evaluate.load("glue", "mrpc"). The stand-ins
# give the same structure: a DatasetDict of train/validation/test with columns sentence1,
# sentence2, label, idx (generated sentence pairs, fixed seed), .map(batched=True,
# remove_columns=...), .rename_column, .set_format("torch"), row indexing for a DataLoader; a
# metric with add_batch / add / compute giving accuracy and f1. Chosen over installing datasets
# (pyarrow, dill, multiprocess, xxhash, fsspec, aiohttp) and writing its cache by hand.
_DATASETS = '''"""A stand-in for datasets: load_dataset("glue"/"nyu-mll/glue", "mrpc") from generated pairs."""
import random

WORDS = ("the a of to in and is was for on with as by at from that this it be are or not which model data "
         "train learn write give list find name city house book music time day year people world water "
         "red blue green cat dog tree river").split()


class Dataset:
    def __init__(self, columns):
        self._cols = dict(columns)
        self._format = None

    @property
    def column_names(self):
        return list(self._cols)

    def __len__(self):
        return len(next(iter(self._cols.values())))

    def __getitem__(self, key):
        if isinstance(key, str):
            return self._cols[key]
        row = {k: v[key] for k, v in self._cols.items()}
        if self._format == "torch":
            import torch

            row = {k: torch.tensor(v) for k, v in row.items()}
        return row

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def map(self, fn, batched=False, remove_columns=None, batch_size=1000, **kwargs):
        remove = set(remove_columns or ())
        if batched:
            out = {}
            for a in range(0, len(self), batch_size):
                part = fn({k: v[a:a + batch_size] for k, v in self._cols.items()})
                for k, v in dict(part).items():
                    out.setdefault(k, []).extend(list(v))
        else:
            rows = [dict(fn(self[i])) for i in range(len(self))]
            out = {k: [r[k] for r in rows] for k in (rows[0] if rows else {})}
        cols = {k: v for k, v in self._cols.items() if k not in remove}
        cols.update(out)
        return Dataset(cols)

    def rename_column(self, old, new):
        return Dataset({(new if k == old else k): v for k, v in self._cols.items()})

    def remove_columns(self, names):
        names = {names} if isinstance(names, str) else set(names)
        return Dataset({k: v for k, v in self._cols.items() if k not in names})

    def set_format(self, type=None, **kwargs):
        self._format = type

    def with_format(self, type=None, **kwargs):
        d = Dataset(self._cols)
        d._format = type
        return d

    def select(self, indices):
        indices = list(indices)
        return Dataset({k: [v[i] for i in indices] for k, v in self._cols.items()})

    def shuffle(self, seed=None):
        idx = list(range(len(self)))
        random.Random(seed).shuffle(idx)
        return self.select(idx)


class DatasetDict(dict):
    def map(self, *args, **kwargs):
        return DatasetDict({k: v.map(*args, **kwargs) for k, v in self.items()})

    def rename_column(self, old, new):
        return DatasetDict({k: v.rename_column(old, new) for k, v in self.items()})

    def remove_columns(self, names):
        return DatasetDict({k: v.remove_columns(names) for k, v in self.items()})

    def set_format(self, type=None, **kwargs):
        for v in self.values():
            v.set_format(type)

    @property
    def column_names(self):
        return {k: v.column_names for k, v in self.items()}


def _pairs(n, seed):
    rng = random.Random(seed)

    def sentence():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."

    s1 = [sentence() for _ in range(n)]
    s2 = [(a if rng.random() < 0.5 else sentence()) for a in s1]
    return Dataset({"sentence1": s1, "sentence2": s2, "label": [int(a == b) for a, b in zip(s1, s2)],
                    "idx": list(range(n))})


SIZES = {"train": 160, "validation": 32, "test": 32}


def _local(folder):
    """A local dataset folder of SPLIT.jsonl files (what load_dataset(folder) reads)."""
    import json
    import os

    out = DatasetDict()
    for f in sorted(os.listdir(folder)):
        if f.endswith(".jsonl"):
            rows = [json.loads(line) for line in open(os.path.join(folder, f)) if line.strip()]
            out[f[: -len(".jsonl")]] = Dataset({k: [r[k] for r in rows] for k in rows[0]})
    return out


def load_dataset(path, name=None, split=None, **kwargs):
    import os

    if os.path.isdir(path):
        d = _local(path)
    elif path.rsplit("/", 1)[-1] == "glue" and name == "mrpc":
        d = DatasetDict({k: _pairs(n, seed) for seed, (k, n) in enumerate(SIZES.items())})
    else:
        raise NotImplementedError(f"the datasets stand-in has glue/mrpc and local jsonl folders only, not {path} {name}")
    return d[split] if split else d
'''

_EVALUATE = '''"""A stand-in for evaluate: load("glue", "mrpc") gives accuracy and f1."""


class _Metric:
    def __init__(self):
        self.preds, self.refs = [], []

    def add_batch(self, predictions=None, references=None):
        self.preds += [int(p) for p in predictions]
        self.refs += [int(r) for r in references]

    def add(self, prediction=None, reference=None):
        self.add_batch([prediction], [reference])

    def compute(self, predictions=None, references=None):
        if predictions is not None:
            self.add_batch(predictions, references)
        p, r = self.preds, self.refs
        self.preds, self.refs = [], []
        acc = sum(a == b for a, b in zip(p, r)) / max(len(p), 1)
        tp = sum(a == 1 and b == 1 for a, b in zip(p, r))
        f1 = 2 * tp / max(sum(p) + sum(r), 1)
        return {"accuracy": acc, "f1": f1}


def load(path, config_name=None, **kwargs):
    return _Metric()
'''

# modded-nanogpt's train_gpt.py imports `kernels` (Hugging Face's kernel hub: get_kernel downloads
# FlashAttention-3 builds). No stand-in: it imports triton first, which this machine lacks too.

STUBS = {
    "datasets": {"datasets/__init__.py": _DATASETS},
    "evaluate": {"evaluate/__init__.py": _EVALUATE},
    "tiktoken": {"tiktoken/__init__.py": _TIKTOKEN},
    "openai": {"openai/__init__.py": _OPENAI},
}

# ---------------------------------------------------------------------------- cases

# llm.c's smallest model is d12 (GPT-2 124M, no flag for fewer layers): a short sequence, a batch
# of 2 and two micro-steps of gradient accumulation, bf16 autocast as its fast launch line has it
LLMC_ARGS = [
    "--input_bin",
    "dev/data/tiny/tiny_train.bin",
    "--input_val_bin",
    "dev/data/tiny/tiny_val.bin",
    "--model",
    "d12",
    "--batch_size",
    "2",
    "--sequence_length",
    "32",
    "--total_batch_size",
    "128",
    "--num_iterations",
    "10",
    "--overfit_single_batch",
    "0",
    "--write_tensors",
    "0",
    "--dtype",
    "bfloat16",
    "--tensorcores",
    "1",
]

CASES = [
    case(
        "alpaca_hf_trainer",
        "tatsu-lab/stanford_alpaca",
        ["train.py", "utils.py"],
        "train.py",
        [
            "--model_name_or_path",
            "tiny-llama",
            "--data_path",
            "alpaca_data.json",
            "--output_dir",
            "out",
            "--max_steps",
            "10",
            "--per_device_train_batch_size",
            "2",
            "--learning_rate",
            "2e-5",
            "--logging_steps",
            "1",
            "--save_strategy",
            "no",
            "--report_to",
            "none",
            "--model_max_length",
            "128",
            "--dataloader_num_workers",
            "0",
        ],
        data=[("tiny_llama", "tiny-llama"), ("alpaca_json", "alpaca_data.json")],
        stubs=["openai"],
        tags=["language", "llm", "HF Trainer", "instruction-tuning", "pad-to-longest", "HfArgumentParser"],
    ),
    case(
        "llmc_gpt2_compile",
        "karpathy/llm.c",
        ["train_gpt2.py"],
        "train_gpt2.py",
        LLMC_ARGS + ["--compile", "1"],
        data=[("llmc_shards", "dev/data/tiny")],
        stubs=["tiktoken"],
        tags=["language", "llm", "gpt2", "torch.compile", "bf16-autocast", "inductor-config", "grad-accum"],
        verify=["--steps", "3"],
    ),
    case(
        "llmc_gpt2_eager",
        "karpathy/llm.c",
        ["train_gpt2.py"],
        "train_gpt2.py",
        LLMC_ARGS + ["--compile", "0"],
        data=[("llmc_shards", "dev/data/tiny")],
        stubs=["tiktoken"],
        tags=["language", "llm", "gpt2", "bf16-autocast", "grad-accum", "fused-adamw"],
        verify=["--steps", "3"],
    ),
    case(
        "modded_nanogpt_speedrun",
        "KellerJordan/modded-nanogpt",
        ["train_gpt.py", "triton_kernels.py", "dc_triton_kernels.py"],
        "train_gpt.py",
        env={"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517"},
        data=[("llmc_shards", "data/fineweb10B", {"name": "fineweb_{split}_000001.bin"})],
        stubs=["tiktoken"],
        tags=[
            "language",
            "llm",
            "speedrun",
            "torchrun-env",
            "triton-kernels",
            "FlexAttention",
            "FA3",
            "fp8",
            "muon-optimizer",
            "torch.compile",
            "multi-file",
        ],
        verify=["--steps", "3"],
    ),
    case(
        "accelerate_nlp_example",
        "huggingface/accelerate",
        {"examples/nlp_example.py": "nlp_example.py"},
        "nlp_example.py",
        ["--mixed_precision", "no"],
        env={"HF_HOME": "{case}/hf", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        data=[("tiny_bert_hub", "hf")],
        stubs=["datasets", "evaluate"],
        tags=[
            "language",
            "bert",
            "glue-mrpc",
            "accelerate",
            "hub-id-from-local-cache",
            "pad-to-longest",
            "gather_for_metrics",
        ],
    ),
    case(
        "peft_dora_llama",
        "huggingface/peft",
        {"examples/dora_finetuning/dora_finetuning.py": "dora_finetuning.py"},
        "dora_finetuning.py",
        [
            "--base_model",
            "tiny-llama",
            "--data_path",
            "guanaco",
            "--output_dir",
            "out",
            "--batch_size",
            "1",
            "--num_epochs",
            "1",
            "--cutoff_len",
            "64",
            "--use_dora",
            "--eval_step",
            "1",
            "--save_step",
            "1000",
            "--device",
            "auto",
        ],
        data=[("tiny_llama", "tiny-llama"), ("text_jsonl", "guanaco")],
        stubs=["datasets"],
        tags=[
            "language",
            "llm",
            "peft",
            "DoRA/LoRA",
            "HF Trainer",
            "fp16-autocast",
            "grad-accum-16",
            "pad-to-max_length",
            "torch.accelerator",
        ],
        verify=["--steps", "3"],
    ),
]
