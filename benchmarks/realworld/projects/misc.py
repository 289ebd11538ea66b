"""Projects of several domains: speech (a GAN vocoder, a seq2seq TTS), recommendation (NCF, a
Keras-like CTR library), reinforcement learning (cleanrl's single-file agents), and a project
template (Lightning + Hydra).

Layouts follow the repositories. Where a repository is meant to be installed (``pip install -e .``,
``poetry install``: DeepCTR-Torch's ``deepctr_torch``, cleanrl's ``cleanrl_utils``) the case folder
goes on PYTHONPATH, as the installation would put it on sys.path, and the script runs from the
folder its README runs it in. The stand-in packages these projects import (librosa, TensorFlow,
tensorboardX) are in _standins.py; STUBS here is its table.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from corpus import case, pin  # noqa: E402

from ._standins import STUBS  # noqa: E402,F401  (librosa, tensorflow, tensorboardX; projects/ collects STUBS)

REPOS = {
    "jik876/hifi-gan": "4769534d45265d52a904b850da5a622601885777",
    "NVIDIA/tacotron2": "185cd24e046cc1304b4f8e564734d2498c6e2e6f",
    "guoyang9/NCF": "89ff06ffcd2bca6bb773b54925265c208a28d318",
    "shenweichen/DeepCTR-Torch": "f6854257b1fc29caab655ce72c6b5528b7432574",
    "vwxyzjn/cleanrl": "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb",
    "ashleve/lightning-hydra-template": "bddbc24b82ab6ccfa6243e815a49dc5bfe8d4144",
}
pin(REPOS)

# the case folder on PYTHONPATH (run.py puts it before the packages outside .venv)
INSTALLED = {"PYTHONPATH": "{case}"}

# ---------------------------------------------------------------------------- data generators

_WORDS = (
    "the printing press was in being comparatively modern and the arts of the exhibition "
    "differ from most crafts represented there in seventeen sixty three a president travels"
).split()


def _sentence(rng, number=True):
    words = [_WORDS[i] for i in rng.integers(len(_WORDS), size=int(rng.integers(4, 10)))]
    if number:
        words.insert(int(rng.integers(len(words))), str(int(rng.integers(2, 1900))))
    return " ".join(words).capitalize() + "."


def _write_wavs(folder, names, sr, seconds, seed):
    """Mono 16-bit wavs: a few partials with a wandering pitch and some noise, lengths in [seconds]."""
    import wave

    import numpy as np

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name in names:
        n = int(sr * rng.uniform(*seconds))
        t = np.arange(n) / sr
        f0 = rng.uniform(100, 300) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(0.5, 3) * t))
        phase = 2 * np.pi * np.cumsum(f0) / sr
        y = sum(np.sin(k * phase) / k for k in range(1, 5)) * 0.3 + 0.02 * rng.standard_normal(n)
        with wave.open(os.path.join(folder, f"{name}.wav"), "wb") as w:  # what scipy.io.wavfile reads
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sr)
            w.writeframes((np.clip(y, -1, 1) * 32767 * 0.8).astype("<i2").tobytes())


def gen_hifigan_ljspeech(path, n_train=20, n_val=2, sr=8000, seconds=(0.3, 0.6)):
    """hifi-gan's LJSpeech-1.1: wavs/<id>.wav and training.txt / validation.txt, lines
    '<id>|<text>|<normalized text>' (get_dataset_filelist keeps the part before the first '|')."""
    import numpy as np

    rng = np.random.default_rng(11)
    ids = [f"LJ{1 + i // 50:03d}-{1 + i % 50:04d}" for i in range(n_train + n_val)]
    _write_wavs(os.path.join(path, "wavs"), ids, sr, seconds, 12)
    for fname, part in (("training.txt", ids[:n_train]), ("validation.txt", ids[n_train:])):
        with open(os.path.join(path, fname), "w", encoding="utf-8") as f:
            for i in part:
                s = _sentence(rng)
                f.write(f"{i}|{s}|{s}\n")


def gen_hifigan_config(path, **overrides):
    """A small config of config_v1.json's keys (read through train.py's --config): prod(upsample_rates)
    equals hop_size, as the generator's output length must match the mel frames."""
    import json

    h = {
        "resblock": "1",
        "num_gpus": 0,
        "batch_size": 2,
        "learning_rate": 0.0002,
        "adam_b1": 0.8,
        "adam_b2": 0.99,
        "lr_decay": 0.999,
        "seed": 1234,
        "upsample_rates": [8, 8],
        "upsample_kernel_sizes": [16, 16],
        "upsample_initial_channel": 32,
        "resblock_kernel_sizes": [3, 7],
        "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5]],
        "segment_size": 1024,
        "num_mels": 80,  # models.Generator's conv_pre takes 80 channels, whatever the config says
        "num_freq": 257,
        "n_fft": 512,
        "hop_size": 64,
        "win_size": 512,
        "sampling_rate": 8000,
        "fmin": 0,
        "fmax": 4000,
        "fmax_for_loss": None,
        "num_workers": 0,
        "dist_config": {"dist_backend": "nccl", "dist_url": "tcp://localhost:54321", "world_size": 1},
        **overrides,
    }
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(h, f, indent=4)


def gen_tacotron2_ljspeech(path, n_train=20, n_val=2, sr=8000, seconds=(0.3, 0.5)):
    """tacotron2's data: path/wavs/<id>.wav and filelists path/train.txt, path/val.txt with lines
    '<wav path relative to the run folder>|<text>' (as filelists/ljs_audio_text_*_filelist.txt,
    whose DUMMY/ prefix the user replaces by the wavs' folder)."""
    import numpy as np

    rng = np.random.default_rng(21)
    ids = [f"LJ{1 + i // 50:03d}-{1 + i % 50:04d}" for i in range(n_train + n_val)]
    _write_wavs(os.path.join(path, "wavs"), ids, sr, seconds, 22)
    rel = os.path.basename(os.path.normpath(path))
    for fname, part in (("train.txt", ids[:n_train]), ("val.txt", ids[n_train:])):
        with open(os.path.join(path, fname), "w", encoding="utf-8") as f:
            for i in part:
                f.write(f"{rel}/wavs/{i}.wav|{_sentence(rng)}\n")


def gen_ncf_data(path, users=24, items=120, per_user=6, negatives=99):
    """NCF-Data in Xiangnan He's format: <dataset>.train.rating ('user\\titem\\trating\\ttime'),
    .test.rating and .test.negative ('(user,item)\\tneg1\\t...\\tneg99'). Then config.py's
    main_path (an absolute path on the author's machine: '/home/share/guoyangyang/...') is set to
    this folder: the one edit the repository asks of its user."""
    import numpy as np

    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(31)
    train, test = [], []
    for u in range(users):
        its = rng.choice(items, per_user + 1, replace=False)
        train += [(u, int(i)) for i in its[:-1]]
        test.append((u, int(its[-1])))
    if all(i != items - 1 for _, i in train):  # item_num is the largest item id seen in training + 1
        train.append((0, items - 1))
    train_set = set(train) | set(test)
    with open(os.path.join(path, "ml-1m.train.rating"), "w") as f:
        f.writelines(f"{u}\t{i}\t5\t978300760\n" for u, i in train)
    with open(os.path.join(path, "ml-1m.test.rating"), "w") as f:
        f.writelines(f"{u}\t{i}\t5\t978300760\n" for u, i in test)
    with open(os.path.join(path, "ml-1m.test.negative"), "w") as f:
        for u, i in test:
            pool = [j for j in range(items) if (u, j) not in train_set]
            negs = rng.choice(pool, negatives, replace=False)
            f.write(f"({u},{i})\t" + "\t".join(str(int(j)) for j in negs) + "\n")
    config = os.path.join(os.path.dirname(os.path.normpath(path)), "config.py")
    with open(config) as f:
        text = f.read()
    rel = "./" + os.path.basename(os.path.normpath(path)) + "/"
    text = text.replace("main_path = '/home/share/guoyangyang/recommendation/NCF-Data/'", f"main_path = '{rel}'")
    with open(config, "w") as f:
        f.write(text)


GENERATORS = {
    "hifigan_ljspeech": gen_hifigan_ljspeech,
    "hifigan_config": gen_hifigan_config,
    "tacotron2_ljspeech": gen_tacotron2_ljspeech,
    "ncf_data": gen_ncf_data,
}

# ---------------------------------------------------------------------------- cases

TACOTRON2_HPARAMS = ",".join(
    [
        "epochs=1",
        "batch_size=2",
        "iters_per_checkpoint=1000",
        "training_files=data/train.txt",
        "validation_files=data/val.txt",
        "sampling_rate=8000",
        "filter_length=256",
        "hop_length=64",
        "win_length=256",
        "n_mel_channels=20",
        "mel_fmax=4000.0",
        "symbols_embedding_dim=32",
        "encoder_embedding_dim=32",
        "encoder_n_convolutions=2",
        "decoder_rnn_dim=64",
        "prenet_dim=32",
        "attention_rnn_dim=64",
        "attention_dim=32",
        "attention_location_n_filters=8",
        "attention_location_kernel_size=7",
        "postnet_embedding_dim=32",
        "postnet_n_convolutions=2",
    ]
)

CASES = [
    case(
        "hifigan",
        "jik876/hifi-gan",
        ["train.py", "env.py", "meldataset.py", "models.py", "utils.py", "config_v1.json"],
        "train.py",
        [
            "--config",
            "config_tiny.json",
            "--training_epochs",
            "1",
            "--stdout_interval",
            "1",
            "--checkpoint_path",
            "cp_hifigan",
        ],
        data=[("hifigan_ljspeech", "LJSpeech-1.1"), ("hifigan_config", "config_tiny.json")],
        stubs=["librosa"],
        tags=[
            "speech",
            "vocoder",
            "GAN",
            "two-optimizers",
            "torch.stft",
            "mp.spawn",
            "DDP",
            "weight_norm",
            "tensorboard",
            "multi-file",
        ],
    ),
    case(
        "tacotron2",
        "NVIDIA/tacotron2",
        [
            "train.py",
            "hparams.py",
            "model.py",
            "layers.py",
            "stft.py",
            "audio_processing.py",
            "utils.py",
            "data_utils.py",
            "loss_function.py",
            "logger.py",
            "plotting_utils.py",
            "distributed.py",
            "multiproc.py",
            "loss_scaler.py",
            "text/",
        ],
        "train.py",
        ["--output_directory", "outdir", "--log_directory", "logdir", "--hparams", TACOTRON2_HPARAMS],
        data=[("tacotron2_ljspeech", "data")],
        stubs=["librosa", "tensorflow"],
        tags=[
            "speech",
            "TTS",
            "seq2seq-attention",
            "LSTMCell-decoder-loop",
            "grad-clipping",
            "apex-fp16-off",
            "tf.contrib.HParams",
            "multi-file",
        ],
    ),
    case(
        "ncf_neumf",
        "guoyang9/NCF",
        ["main.py", "config.py", "model.py", "data_utils.py", "evaluate.py"],
        "main.py",
        ["--epochs", "1", "--batch_size", "64", "--factor_num", "8", "--num_layers", "2"],
        data=[("ncf_data", "NCF-Data")],
        stubs=["tensorboardX"],
        tags=[
            "recommendation",
            "NCF",
            "embeddings",
            "negative-sampling",
            "DataLoader-workers",
            "scipy.sparse",
            "multi-file",
        ],
    ),
    case(
        "deepctr_deepfm_criteo",
        "shenweichen/DeepCTR-Torch",
        ["setup.py", "deepctr_torch/", "examples/run_classification_criteo.py", "examples/criteo_sample.txt"],
        "run_classification_criteo.py",
        cwd="examples",
        env=INSTALLED,
        stubs=["tensorflow"],
        tags=[
            "recommendation",
            "CTR",
            "DeepFM",
            "keras-like-fit",
            "library-package",
            "sklearn",
            "pandas",
            "cuda:0-string",
        ],
    ),
    case(
        "cleanrl_ppo",
        "vwxyzjn/cleanrl",
        ["pyproject.toml", "cleanrl/ppo.py"],
        "cleanrl/ppo.py",
        ["--total-timesteps", "256", "--num-envs", "2", "--num-steps", "64"],
        tags=["rl", "PPO", "gymnasium-vector-env", "tyro-args", "tensorboard", "single-file"],
    ),
    case(
        "cleanrl_dqn",
        "vwxyzjn/cleanrl",
        ["pyproject.toml", "cleanrl/dqn.py", "cleanrl_utils/__init__.py", "cleanrl_utils/buffers.py"],
        "cleanrl/dqn.py",
        ["--total-timesteps", "300", "--learning-starts", "100", "--buffer-size", "1000"],
        env=INSTALLED,
        tags=["rl", "DQN", "replay-buffer", "target-network", "gymnasium", "tyro-args", "installed-package"],
    ),
    case(
        "hydra_template_mnist",
        "ashleve/lightning-hydra-template",
        [".project-root", "pyproject.toml", "configs/", "src/"],
        "src/train.py",
        [
            "trainer=gpu",
            "trainer.max_epochs=1",
            "+trainer.limit_train_batches=10",
            "+trainer.limit_val_batches=2",
            "+trainer.limit_test_batches=2",
            "data.batch_size=16",
            "data.train_val_test_split=[1000,140,140]",
        ],
        data=[("mnist", "data")],
        tags=[
            "template",
            "Lightning",
            "hydra-config",
            "rootutils",
            "LightningDataModule",
            "torchmetrics",
            "multi-package",
        ],
    ),
]
