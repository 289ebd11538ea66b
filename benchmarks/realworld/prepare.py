"""Lay out the cases of corpus.py from local mirrors, with generated data, so they run offline.

Usage: python prepare.py OUT_DIR [--mirrors DIR] [--only a,b]

Fetches nothing: each repository's git directory is looked up under DIR (default /work/.mirror),
as DIR/owner+name/repo (bare, or with a .git inside), DIR/owner+name or DIR/owner/name.
Writes OUT_DIR/<case>/ with the case's files at the pinned commit (a notebook mapped to a .py
path converted to a script), the data its script reads (random tensors, fake images, small
text, written by the generators below; nothing downloaded), stand-ins for packages this machine
lacks (STUBS), and OUT_DIR/cases.json (what run.py reads).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import re
import struct
import subprocess
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from corpus import CASES  # noqa: E402
from projects import GENERATORS as PROJECT_GENERATORS  # noqa: E402
from projects import STUBS as PROJECT_STUBS  # noqa: E402

# ---------------------------------------------------------------------------- mirrors


def find_mirror(root: str, repo: str) -> str:
    owner, name = repo.split("/")
    for cand in (
        os.path.join(root, f"{owner}+{name}", "repo", ".git"),
        os.path.join(root, f"{owner}+{name}", "repo"),
        os.path.join(root, f"{owner}+{name}"),
        os.path.join(root, owner, name, ".git"),
        os.path.join(root, owner, name),
    ):
        if os.path.isdir(cand) and os.path.exists(os.path.join(cand, "HEAD")):
            return cand
    raise SystemExit(f"no git directory for {repo} under {root} (fetch it first)")


def git_show(git_dir: str, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def git_files(git_dir: str, commit: str, folder: str) -> list[str]:
    """The files under FOLDER (a repository path ending with "/") at COMMIT."""
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit, "--", folder],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.splitlines()


def expand_files(git_dir: str, commit: str, files: dict) -> dict:
    """The case's file map with each folder entry ("src/" -> "dst/") replaced by its files."""
    out = {}
    for src, dst in files.items():
        if not src.endswith("/"):
            out[src] = dst
            continue
        for path in git_files(git_dir, commit, src):
            out[path] = dst + path[len(src) :]
    return out


# a line magic, cell magic or shell escape; not a continued line that starts with an operator
# such as `%(a, b))`, the format operator of a print on the line above
MAGIC = re.compile(r"\s*(%%?[A-Za-z_]|!(?!=))")


def notebook_to_script(raw: bytes) -> bytes:
    """A notebook as File > Download as .py gives it: code cells in order, magics commented out."""
    nb = json.loads(raw)
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        lines = [("# " + line) if MAGIC.match(line) else line for line in src.splitlines()]
        cells.append("\n".join(lines).rstrip())
    return ("\n\n\n".join(c for c in cells if c.strip()) + "\n").encode()


# ---------------------------------------------------------------------------- data generators


def _idx(path, arr, magic):
    with open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in arr.shape) + arr.tobytes())


def _mnist_like(root, folder, n_train, n_test, seed):
    raw = os.path.join(root, folder, "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        _idx(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), 2051)
        _idx(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), rng.integers(0, 10, (n,), dtype=np.uint8), 2049)


def gen_mnist(path, n_train=1024, n_test=256):
    """torchvision's MNIST root: path/MNIST/raw/*-ubyte (found there, nothing is downloaded)."""
    _mnist_like(path, "MNIST", n_train, n_test, 0)


def gen_fashion_mnist(path, n_train=1024, n_test=256):
    _mnist_like(path, "FashionMNIST", n_train, n_test, 1)


def gen_cora(path, nodes=1600, features=64, classes=7, edges=4000):
    """Cora's two files: '<id> <0/1 features> <label>' and '<cited> <citing>' (ids not 0..n-1)."""
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(2)
    ids = rng.choice(10**6, nodes, replace=False) + 31336
    labels = [f"Class_{i}" for i in range(classes)]
    with open(os.path.join(path, "cora.content"), "w") as f:
        for i in ids:
            feats = rng.random(features) < 0.05
            f.write(f"{i}\t" + "\t".join(str(int(v)) for v in feats) + f"\t{labels[rng.integers(classes)]}\n")
    with open(os.path.join(path, "cora.cites"), "w") as f:
        seen = set()
        while len(seen) < edges:
            a, b = rng.integers(nodes, size=2)
            if a != b and (a, b) not in seen:
                seen.add((a, b))
                f.write(f"{ids[a]}\t{ids[b]}\n")


def _words(rng, lines, vocab=200):
    words = [f"w{i}" for i in range(vocab)]
    return "".join(" ".join(rng.choice(words, rng.integers(5, 15))) + "\n" for _ in range(lines))


def gen_words(path, lines=400):
    """Word-level text, one sentence a line (PTB-like)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(_words(np.random.default_rng(zlib.crc32(os.path.basename(path).encode())), lines))


def _chars(seed, n):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,.!?'\n"))
    return "".join(rng.choice(letters, n))


def gen_text(path, n=20000):
    with open(path, "w") as f:
        f.write(_chars(3, n))


def gen_text_gz(path, n=20000):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = np.random.default_rng(4)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,.!?'"))
    lines, size = [], 0
    while size < n:  # lines of 8 to 60 characters: a line is an input and its shifted target
        lines.append("".join(rng.choice(letters, rng.integers(8, 61))))
        size += len(lines[-1]) + 1
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")


def gen_names(path, n=2000):
    rng = np.random.default_rng(5)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    with open(path, "w") as f:
        for _ in range(n):
            f.write("".join(rng.choice(letters, rng.integers(3, 9))) + "\n")


def gen_names_csv_gz(path, n=800):
    """PyTorchZeroToAll's names_train.csv.gz / names_test.csv.gz: rows of name, country."""
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(6)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    countries = ["Czech", "German", "Arabic", "Japanese", "Chinese", "Russian", "Italian", "Irish"]
    for name, k in (("names_train.csv.gz", n), ("names_test.csv.gz", n // 4)):
        buf = io.StringIO()
        w = csv.writer(buf)
        for _ in range(k):
            w.writerow(
                ["".join(rng.choice(letters, rng.integers(3, 9))).capitalize(), countries[rng.integers(len(countries))]]
            )
        with gzip.open(os.path.join(path, name), "wt") as f:
            f.write(buf.getvalue())


def gen_binarized_mnist(path, n=1000):
    rng = np.random.default_rng(7)
    arrays = {
        k: (rng.random((m, 784)) < 0.2).astype(np.float32)
        for k, m in (("train_data", n), ("valid_data", n // 4), ("test_data", n // 4))
    }
    np.savez(path, **arrays)


def gen_cifar_pt(path, n_train=2048, n_test=2000):
    """airbench's cache: path/train.pt, test.pt = {'images': uint8 N,32,32,3, 'labels': int64 N, 'classes'}."""
    import torch

    os.makedirs(path, exist_ok=True)
    g = torch.Generator().manual_seed(8)
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    for name, n in (("train.pt", n_train), ("test.pt", n_test)):
        images = torch.randint(0, 256, (n, 32, 32, 3), dtype=torch.uint8, generator=g)
        labels = torch.randint(0, 10, (n,), generator=g)
        torch.save({"images": images, "labels": labels, "classes": classes}, os.path.join(path, name))


def gen_fineweb_shards(path, tokens=200_000):
    """build-nanogpt's edu_fineweb10B/edufineweb_{train,val}_NNNNNN.npy: uint16 GPT-2 token ids."""
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(9)
    for split in ("val", "train"):
        np.save(os.path.join(path, f"edufineweb_{split}_000000.npy"), rng.integers(0, 50257, tokens).astype(np.uint16))


def gen_paired_images(path, n=4, h=256):
    """An ImageFolder of side-by-side pairs (satellite | map), one class folder."""
    from PIL import Image

    folder = os.path.join(path, "pairs")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(10)
    for i in range(n):
        Image.fromarray(rng.integers(0, 256, (h, 2 * h, 3), dtype=np.uint8)).save(os.path.join(folder, f"{i}.jpg"))


def gen_image_classes(path, classes=("pizza", "steak", "sushi"), n=16, h=80):
    """An ImageFolder: path/<class>/<i>.jpg, random RGB images."""
    from PIL import Image

    rng = np.random.default_rng(zlib.crc32(path.encode()) & 0xFFFF)
    for k in classes:
        os.makedirs(os.path.join(path, k), exist_ok=True)
        for i in range(n):
            img = rng.integers(0, 256, (h, h, 3), dtype=np.uint8)
            Image.fromarray(img).save(os.path.join(path, k, f"{i}.jpg"))


def gen_text8(path, words=200_000, vocab=2000):
    """text8-like: one line of lower-case words, Zipf-distributed (word2vec's subsampling keeps
    the rare ones, drops most of the frequent)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    rng = np.random.default_rng(11)
    p = 1.0 / np.arange(1, vocab + 1)
    ids = rng.choice(vocab, words, p=p / p.sum())
    letters = "abcdefghijklmnopqrstuvwxyz"
    names = ["".join(letters[(i // 26**k) % 26] for k in range(3)) for i in range(vocab)]
    with open(path, "w") as f:
        f.write(" " + " ".join(names[i] for i in ids))


def gen_folder(path):
    os.makedirs(path, exist_ok=True)


GENERATORS = {
    "mnist": gen_mnist,
    "fashion_mnist": gen_fashion_mnist,
    "cora": gen_cora,
    "words": gen_words,
    "text": gen_text,
    "text_gz": gen_text_gz,
    "names": gen_names,
    "names_csv_gz": gen_names_csv_gz,
    "binarized_mnist": gen_binarized_mnist,
    "cifar_pt": gen_cifar_pt,
    "fineweb_shards": gen_fineweb_shards,
    "paired_images": gen_paired_images,
    "image_classes": gen_image_classes,
    "text8": gen_text8,
    "folder": gen_folder,
}

# ---------------------------------------------------------------------------- stand-in packages

_GYM = '''"""A stand-in for gym with one environment: CartPole (the classic equations, old step API)."""
import math

import numpy as np


class Box:
    def __init__(self, shape):
        self.shape = shape


class Discrete:
    def __init__(self, n):
        self.n = n
        self._rng = np.random.default_rng(0)

    def sample(self):
        return int(self._rng.integers(self.n))


class CartPole:
    def __init__(self):
        self.observation_space = Box((4,))
        self.action_space = Discrete(2)
        self._rng = np.random.default_rng(0)
        self.state = None
        self.unwrapped = self

    def seed(self, seed=None):
        self._rng = np.random.default_rng(seed)
        return [seed]

    def reset(self):
        self.state = self._rng.uniform(-0.05, 0.05, 4)
        self.steps = 0
        return np.array(self.state, dtype=np.float32)

    def step(self, action):
        x, x_dot, th, th_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(th), math.sin(th)
        temp = (force + 0.05 * th_dot * th_dot * sin) / 1.1
        th_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos * cos / 1.1))
        x_acc = temp - 0.05 * th_acc * cos / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        th, th_dot = th + 0.02 * th_dot, th_dot + 0.02 * th_acc
        self.state = np.array([x, x_dot, th, th_dot])
        self.steps += 1
        done = bool(abs(x) > 2.4 or abs(th) > 0.2095 or self.steps >= 200)
        return np.array(self.state, dtype=np.float32), 1.0, done, {}

    def render(self, *args, **kwargs):
        return None

    def close(self):
        pass


def make(env_id):
    if not env_id.startswith("CartPole"):
        raise NotImplementedError(f"the gym stand-in has CartPole only, not {env_id}")
    return CartPole()
'''

_IPYTHON_DISPLAY = """def clear_output(wait=False):
    pass


def display(*objs, **kwargs):
    pass


class HTML:
    def __init__(self, data=None, **kwargs):
        self.data = data


class Image:
    def __init__(self, data=None, filename=None, **kwargs):
        self.data, self.filename = data, filename
"""

_IPYWIDGETS = '''"""A stand-in for ipywidgets: widgets that hold their attributes and show nothing."""


class _Attrs:
    pass


class _Widget:
    def __init__(self, *args, children=(), **kwargs):
        self.children = tuple(children)
        self.value = kwargs.pop("value", "")
        self.bar_style = ""
        self.layout = _Attrs()
        self.style = _Attrs()
        for k, v in kwargs.items():
            setattr(self, k, v)

    def close(self):
        pass


class FloatProgress(_Widget):
    pass


class HTML(_Widget):
    pass


class HBox(_Widget):
    pass
'''


def _unused(*names):
    """A stand-in module whose names raise if called: imported for plots after training."""
    body = "".join(
        f"\n\nclass {n}:\n    def __init__(self, *args, **kwargs):\n        raise NotImplementedError('a stand-in')\n"
        if n[0].isupper()
        else f"\n\ndef {n}(*args, **kwargs):\n    raise NotImplementedError('a stand-in')\n"
        for n in names
    )
    return '"""A stand-in: imported, not used before training ends."""' + body


STUBS = {
    "gym": {"gym/__init__.py": _GYM},
    "IPython": {
        # matplotlib reads version_info of an IPython it finds imported
        "IPython/__init__.py": "version_info = (8, 30, 0)\n\n\ndef get_ipython():\n    return None\n",
        "IPython/display.py": _IPYTHON_DISPLAY,
    },
    "ipywidgets": {"ipywidgets/__init__.py": _IPYWIDGETS},  # what tqdm.notebook builds its bar of
    "pandas": {"pandas/__init__.py": '"""A stand-in: imported, never used."""\n'},
    "seaborn": {"seaborn/__init__.py": '"""A stand-in: imported, never used."""\n'},
    "sklearn": {
        "sklearn/__init__.py": '"""A stand-in: the modules a notebook imports for its plots after training."""\n',
        "sklearn/decomposition.py": _unused("PCA"),
        "sklearn/manifold.py": _unused("TSNE"),
        "sklearn/metrics.py": _unused("confusion_matrix", "ConfusionMatrixDisplay"),
    },
    "torchsummary": {
        "torchsummary/__init__.py": "def summary(model, input_size, *args, **kwargs):\n    print(model)\n"
    },
}

for _table, _more, _what in ((GENERATORS, PROJECT_GENERATORS, "generator"), (STUBS, PROJECT_STUBS, "stand-in")):
    for _name in _more.keys() & _table.keys():
        raise SystemExit(f"projects: {_what} {_name!r} is also defined in prepare.py")
    _table.update(_more)

# ---------------------------------------------------------------------------- layout


def lay_out(c: dict, out: str, mirrors: str) -> dict:
    folder = os.path.join(out, c["name"])
    os.makedirs(folder, exist_ok=True)
    git_dir = find_mirror(mirrors, c["repo"])
    for src, dst in expand_files(git_dir, c["commit"], c["files"]).items():
        data = git_show(git_dir, c["commit"], src)
        if src.endswith(".ipynb") and dst.endswith(".py"):
            data = notebook_to_script(data)
        target = os.path.join(folder, dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    run_dir = os.path.normpath(os.path.join(folder, c["cwd"]))
    os.makedirs(run_dir, exist_ok=True)
    for stub in c["stubs"]:
        for rel, text in STUBS[stub].items():
            target = os.path.join(run_dir, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as f:
                f.write(text)
    for entry in c["data"]:
        gen, rel, opts = entry[0], entry[1], (entry[2] if len(entry) > 2 else {})
        target = os.path.normpath(os.path.join(run_dir, rel))
        if not (target + os.sep).startswith(os.path.abspath(folder) + os.sep) and target != os.path.abspath(folder):
            raise SystemExit(f"{c['name']}: data path {rel} leaves the case folder")
        GENERATORS[gen](target, **opts)
    return {
        **c,
        "folder": os.path.abspath(run_dir),
        "case_dir": os.path.abspath(folder),
        "url": f"https://github.com/{c['repo']}/blob/{c['commit']}/{next(iter(c['files']))}",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    cases = [lay_out(c, out, a.mirrors) for c in CASES if not only or c["name"] in only]
    index = os.path.join(out, "cases.json")
    if only and os.path.exists(index):  # --only lays out some again: keep the others' entries
        done = {c["name"]: c for c in cases}
        kept = {c["name"]: c for c in json.load(open(index))}
        cases = [done.get(c["name"]) or kept[c["name"]] for c in CASES if c["name"] in done or c["name"] in kept]
    with open(index, "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} cases from {len({c['repo'] for c in cases})} repositories in {out}")


if __name__ == "__main__":
    main()
