"""How a case of the real-world corpus is built: the pinned commits (REPOS) and ``case``/``pin``.

A case names a repository (owner/name), a commit, the files to check out (repository path -> path
in the case folder), the script and the folder it runs in (both relative to the case folder),
small arguments, extra environment, the data generators of prepare.py that write what it reads
(generator, path relative to the run folder, inside the case folder; options), stand-ins for
packages it imports that this machine lacks (prepare.STUBS), and tags (domain, style). REPOS
holds the tutorial corpus's pins (corpus.py, corpus_courses.py); corpus_frameworks.py and the
modules of projects/ add theirs with ``pin``. corpus.py re-exports all three names.
"""

from __future__ import annotations

REPOS = {
    "tkipf/pygcn": "1600b5b748b3976413d1e307540ccc62605b4d6d",
    "Diego999/pyGAT": "3664f2dc90cbf971564c0bf186dc794f12446d0c",
    "eriklindernoren/PyTorch-GAN": "36d3c77e5ff20ebe0aeefd322326a134a279b93e",
    "yunjey/pytorch-tutorial": "0500d3df5a2a8080ccfccbc00aca0eacc21818db",
    "locuslab/TCN": "2f8c2b817050206397458dfd1f5a25ce8a32fe65",
    "karpathy/pytorch-made": "81886ccc8270cdf3a2b32cbbca5c7feab422f907",
    "karpathy/makemore": "988aa59e4d8fefa526d06f3b453ad116258398d4",
    "karpathy/build-nanogpt": "6104ab1b53920f6e2159749676073ff7d815c1fa",
    "karpathy/ng-video-lecture": "52201428ed7b46804849dea0b3ccf0de9df1a5c3",
    "cloneofsimo/minDiffusion": "00a3c8066d25a34d3d472ef6c87c7b6b238ea444",
    "TeaPearce/Conditional_Diffusion_MNIST": "657b49854bbf844caa5580177243ae607c79339f",
    "spro/char-rnn.pytorch": "282bcb6b15ab3929d6a588b455cfc0f19f32add4",
    "usuyama/pytorch-unet": "a0ec1374e06ca9161c21781302328b074f19391b",
    "higgsfield/RL-Adventure": "0f82b6922e8a1a8515fc4c84c28702e7caa226f1",
    "victoresque/pytorch-template": "41dc06f6f8f3f38c6ed49f01ff7d89cd5688adc4",
    "L1aoXingyu/pytorch-beginner": "a57dd7ea35c9965a41f4963dee62d38884f92a65",
    "hunkim/PyTorchZeroToAll": "e5a260fac0b4ff1e2ec434fc6f0d962ac97fc289",
    "MorvanZhou/PyTorch-Tutorial": "dbe154a9e56635e51c6b0c2ccea8ae36cfb585a7",
    "KellerJordan/cifar10-airbench": "f1c599c4af24aca803e3e65a6a7e52a502e09d0e",
    "lyeoni/pytorch-mnist-GAN": "cc1ffdb3da2c594a8903e4833fbe66709c0c8dcd",
    "GunhoChoi/Kind-PyTorch-Tutorial": "6e98e475eda6b1a449a8470384a7978462820e52",
    "mrdbourke/pytorch-deep-learning": "baa27b691617461c173ecf3439793cd8cde74e13",
    "bentrevett/pytorch-image-classification": "33c9cfdb9097bc65b5800c1996f199f0ba520888",
    "timbmg/VAE-CVAE-MNIST": "4f1b22367a5c5cff88bf97ce78219132aa9fd977",
    "ptrblck/pytorch_misc": "31ac50c415f16cf7fec277dbdba72b9fb4d732d3",
    "udacity/deep-learning-v2-pytorch": "c9404fc86181fc3f0906b368697268257f348535",
    "Atcold/NYU-DLSP20": "3049c83260ba05700e2ab9b7ed13cdbe5ddba0fd",
    "rasbt/deeplearning-models": "18e046926551378cd691fd871dda0f21dcd272ab",
    "rasbt/machine-learning-book": "35ab3774e8e249c43a98209d8efd94c060102003",
    "Jackson-Kang/Pytorch-VAE-tutorial": "ae227c560ee09a92c9e57088d093022882327b46",
}


def pin(repos: dict) -> None:
    """Add other modules' pinned commits to REPOS (the same commit where one is already pinned)."""
    for repo, commit in repos.items():
        if REPOS.setdefault(repo, commit) != commit:
            raise ValueError(f"{repo}: pinned at {REPOS[repo]} and at {commit}")


def case(name, repo, files, script, args=(), cwd=".", data=(), env=None, stubs=(), tags=(), verify=()):
    """One case. A path in ``files`` that ends with "/" is a folder: all of it, at the same place
    under the destination folder. ``verify``: arguments for ``xla-migrate verify`` beyond run.py's
    own (``--steps 3`` where a step takes minutes on 2 cores)."""
    if isinstance(files, (list, tuple)):
        files = {f: f for f in files}
    return {
        "name": name,
        "repo": repo,
        "commit": REPOS[repo],
        "files": dict(files),
        "cwd": cwd,
        "script": script,
        "args": list(args),
        "env": dict(env or {}),
        "data": [list(d) for d in data],
        "stubs": list(stubs),
        "tags": list(tags),
        "verify": list(verify),
    }
