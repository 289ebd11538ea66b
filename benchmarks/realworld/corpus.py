"""The case table of our own real-world corpus: public GPU training scripts at pinned commits.

Nothing here is the scripts' code: each case names a repository, a commit, the files to check out,
the script, its arguments, data generators, stand-ins and tags (corpus_case.py says what each
field is; its REPOS, ``case`` and ``pin`` are re-exported here). CASES holds, in this order,
the graph networks and GANs below, the course and tutorial cases of corpus_courses.py, the rest
below (sequence and language models, diffusion, segmentation, reinforcement learning, templates,
new-style vision), then corpus_frameworks.py's and projects/'s cases.
A ``.ipynb`` source mapped to a ``.py`` path is converted (code cells joined, magics dropped):
a course notebook as a user would export it.
"""

from __future__ import annotations

from corpus_case import REPOS, case, pin  # noqa: F401  (REPOS, pin: corpus_frameworks.py and projects/ import them from here)
from corpus_courses import COURSE_CASES


def _gan(name, extra=()):
    d = f"implementations/{name}"
    return case(
        f"pytorchgan_{name}",
        "eriklindernoren/PyTorch-GAN",
        [f"{d}/{name}.py"],
        f"{name}.py",
        ["--n_epochs", "1", "--batch_size", "16", *extra],
        cwd=d,
        data=[("mnist", "../../data/mnist"), ("folder", "images")],
        tags=["gan", "mnist", "torch.cuda.FloatTensor", "single-file"],
    )


def _tcn(name, sub, script, args, data=()):
    d = f"TCN/{sub}"
    return case(
        f"tcn_{name}",
        "locuslab/TCN",
        ["TCN/__init__.py", "TCN/tcn.py", f"{d}/{script}", f"{d}/model.py", f"{d}/utils.py"],
        script,
        args,
        cwd=d,
        data=data,
        tags=["research", "sequence", "Variable", "weight_norm", "multi-file"],
    )


CORA = [("cora", "data/cora")]  # pyGAT reads ./data/cora/
CORA_UP = [("cora", "../data/cora")]  # pygcn reads ../data/cora/
MNIST = [("mnist", "data")]

CASES = [
    # graph networks
    case(
        "pygcn",
        "tkipf/pygcn",
        {
            "pygcn/train.py": "run/train.py",
            "pygcn/__init__.py": "run/pygcn/__init__.py",
            "pygcn/layers.py": "run/pygcn/layers.py",
            "pygcn/models.py": "run/pygcn/models.py",
            "pygcn/utils.py": "run/pygcn/utils.py",
        },
        "train.py",
        ["--epochs", "12"],
        cwd="run",
        data=CORA_UP,
        tags=["graph", "GCN", "sparse-adjacency", "torch.sparse.mm", "multi-file"],
    ),
    case(
        "pygat",
        "Diego999/pyGAT",
        ["train.py", "utils.py", "models.py", "layers.py"],
        "train.py",
        ["--epochs", "12", "--hidden", "8", "--nb_heads", "2", "--patience", "5"],
        data=CORA,
        tags=["graph", "GAT", "dense-attention", "Variable", "multi-file"],
    ),
    case(
        "pygat_sparse",
        "Diego999/pyGAT",
        ["train.py", "utils.py", "models.py", "layers.py"],
        "train.py",
        ["--sparse", "--epochs", "12", "--hidden", "8", "--nb_heads", "2", "--patience", "5"],
        data=CORA,
        tags=["graph", "GAT", "sparse-adjacency", "custom-autograd-spmm", "multi-file"],
    ),
    # GANs
    _gan("dcgan"),
    _gan("wgan"),
    _gan("infogan"),
    _gan("aae"),
    _gan("softmax_gan"),
    _gan("lsgan"),
    case(
        "lyeoni_gan_notebook",
        "lyeoni/pytorch-mnist-GAN",
        {"pytorch-mnist-GAN.ipynb": "pytorch_mnist_gan.py"},
        "pytorch_mnist_gan.py",
        data=[("mnist", "mnist_data"), ("folder", "samples")],
        tags=["gan", "mnist", "notebook-converted", "Variable"],
    ),
    case(
        "kind_gan_dataparallel",
        "GunhoChoi/Kind-PyTorch-Tutorial",
        ["09_GAN_LayerName_MultiGPU/GAN_LayerName_MultiGPU.py"],
        "GAN_LayerName_MultiGPU.py",
        cwd="09_GAN_LayerName_MultiGPU",
        data=[("mnist", ".", {"n_train": 6000}), ("folder", "result")],
        tags=["gan", "DataParallel", "old-style", "Variable"],
    ),
    *COURSE_CASES,
    # sequence models (research)
    _tcn(
        "adding",
        "adding_problem",
        "add_test.py",
        ["--seq_len", "50", "--levels", "4", "--nhid", "16", "--epochs", "1", "--log-interval", "5"],
    ),
    _tcn(
        "copymem",
        "copy_memory",
        "copymem_test.py",
        [
            "--seq_len",
            "10",
            "--blank_len",
            "20",
            "--levels",
            "4",
            "--nhid",
            "10",
            "--epochs",
            "1",
            "--log-interval",
            "5",
        ],
    ),
    _tcn(
        "pmnist",
        "mnist_pixel",
        "pmnist_test.py",
        ["--levels", "2", "--nhid", "8", "--batch_size", "16", "--epochs", "1", "--log-interval", "5"],
        data=[("mnist", "data/mnist")],
    ),
    _tcn(
        "word_cnn",
        "word_cnn",
        "word_cnn_test.py",
        [
            "--emsize",
            "32",
            "--nhid",
            "32",
            "--levels",
            "2",
            "--batch_size",
            "8",
            "--seq_len",
            "20",
            "--validseqlen",
            "10",
            "--epochs",
            "1",
            "--log-interval",
            "5",
        ],
        data=[("words", "data/penn/train.txt"), ("words", "data/penn/valid.txt"), ("words", "data/penn/test.txt")],
    ),
    case(
        "made",
        "karpathy/pytorch-made",
        ["made.py", "run.py"],
        "run.py",
        ["-d", "binarized_mnist.npz", "-q", "64"],
        data=[("binarized_mnist", "binarized_mnist.npz")],
        tags=["research", "density-estimation", "Variable", "masked-linear"],
    ),
    # language models
    case(
        "makemore",
        "karpathy/makemore",
        ["makemore.py"],
        "makemore.py",
        [
            "-i",
            "names.txt",
            "--device",
            "cuda",
            "--num-workers",
            "0",
            "--max-steps",
            "20",
            "--n-layer",
            "2",
            "--n-embd",
            "32",
            "--batch-size",
            "16",
        ],
        data=[("names", "names.txt")],
        tags=["llm", "transformer", "--device cuda", "tensorboard"],
    ),
    case(
        "ng_bigram",
        "karpathy/ng-video-lecture",
        ["bigram.py"],
        "bigram.py",
        data=[("text", "input.txt")],
        tags=["llm", "bigram", "course"],
    ),
    case(
        "build_nanogpt",
        "karpathy/build-nanogpt",
        ["train_gpt2.py", "hellaswag.py"],
        "train_gpt2.py",
        data=[("fineweb_shards", "edu_fineweb10B")],
        tags=["llm", "gpt2", "torch.compile", "bf16-autocast", "fused-adamw", "ddp"],
    ),
    case(
        "char_rnn_spro",
        "spro/char-rnn.pytorch",
        ["train.py", "helpers.py", "model.py", "generate.py"],
        "train.py",
        [
            "input.txt",
            "--cuda",
            "--n_epochs",
            "20",
            "--chunk_len",
            "40",
            "--batch_size",
            "16",
            "--hidden_size",
            "32",
            "--print_every",
            "5",
        ],
        data=[("text", "input.txt")],
        tags=["nlp", "char-rnn", "--cuda flag", "multi-file"],
    ),
    # diffusion
    case(
        "minddpm",
        "cloneofsimo/minDiffusion",
        ["superminddpm.py"],
        "superminddpm.py",
        data=[*MNIST, ("folder", "contents")],
        tags=["diffusion", "DDPM", "mnist", "tqdm"],
    ),
    case(
        "cond_diffusion",
        "TeaPearce/Conditional_Diffusion_MNIST",
        ["script.py"],
        "script.py",
        data=[*MNIST, ("folder", "data/diffusion_outputs10")],
        tags=["diffusion", "DDPM", "classifier-free-guidance", "mnist", "device 'cuda:0'"],
    ),
    # segmentation
    case(
        "unet_notebook",
        "usuyama/pytorch-unet",
        {
            "pytorch_unet.ipynb": "pytorch_unet_nb.py",
            "pytorch_unet.py": "pytorch_unet.py",
            "loss.py": "loss.py",
            "helper.py": "helper.py",
            "simulation.py": "simulation.py",
        },
        "pytorch_unet_nb.py",
        stubs=["pandas", "torchsummary"],
        tags=["segmentation", "U-Net", "notebook-converted", "synthetic-data"],
    ),
    case(
        "kind_segmentation",
        "GunhoChoi/Kind-PyTorch-Tutorial",
        [
            "12_Semantic_Segmentation/main.py",
            "12_Semantic_Segmentation/UNet.py",
            "12_Semantic_Segmentation/FusionNet.py",
            "12_Semantic_Segmentation/Basic_blocks.py",
        ],
        "main.py",
        ["--network", "unet", "--batch_size", "2"],
        cwd="12_Semantic_Segmentation",
        data=[("paired_images", "maps"), ("folder", "result"), ("folder", "model")],
        tags=["segmentation", "U-Net", "DataParallel", "ImageFolder", "Variable"],
    ),
    # reinforcement learning (gym is a stand-in CartPole written by prepare.py)
    case(
        "rl_dqn_notebook",
        "higgsfield/RL-Adventure",
        {
            "1.dqn.ipynb": "dqn.py",
            "common/__init__.py": "common/__init__.py",
            "common/replay_buffer.py": "common/replay_buffer.py",
        },
        "dqn.py",
        stubs=["gym", "IPython"],
        tags=["rl", "DQN", "notebook-converted", "Variable-lambda", "old-style"],
    ),
    case(
        "rl_dueling_dqn_notebook",
        "higgsfield/RL-Adventure",
        {
            "3.dueling dqn.ipynb": "dueling_dqn.py",
            "common/__init__.py": "common/__init__.py",
            "common/replay_buffer.py": "common/replay_buffer.py",
        },
        "dueling_dqn.py",
        stubs=["gym", "IPython"],
        tags=["rl", "dueling-DQN", "target-network", "notebook-converted", "old-style"],
    ),
    # project templates
    case(
        "pytorch_template",
        "victoresque/pytorch-template",
        [
            "train.py",
            "config.json",
            "parse_config.py",
            "base/__init__.py",
            "base/base_data_loader.py",
            "base/base_model.py",
            "base/base_trainer.py",
            "data_loader/data_loaders.py",
            "logger/__init__.py",
            "logger/logger.py",
            "logger/logger_config.json",
            "logger/visualization.py",
            "model/loss.py",
            "model/metric.py",
            "model/model.py",
            "trainer/__init__.py",
            "trainer/trainer.py",
            "utils/__init__.py",
            "utils/util.py",
        ],
        "train.py",
        ["-c", "config.json"],
        data=MNIST,
        tags=["template", "config-json", "DataParallel", "multi-package"],
    ),
    # new style: half precision, channels_last, torch.compile
    case(
        "airbench94",
        "KellerJordan/cifar10-airbench",
        {"legacy/airbench94.py": "airbench94.py"},
        "airbench94.py",
        data=[("cifar_pt", "cifar10")],
        tags=["vision", "cifar10", "half", "channels_last", "cuda-events", "new-style"],
    ),
    case(
        "airbench94_compiled",
        "KellerJordan/cifar10-airbench",
        {"legacy/airbench94_compiled.py": "airbench94_compiled.py"},
        "airbench94_compiled.py",
        data=[("cifar_pt", "cifar10")],
        tags=["vision", "cifar10", "half", "torch.compile max-autotune", "new-style"],
    ),
    case(
        "airbench94_muon",
        "KellerJordan/cifar10-airbench",
        ["airbench94_muon.py"],
        "airbench94_muon.py",
        data=[("cifar_pt", "cifar10")],
        tags=["vision", "cifar10", "muon-optimizer", "bf16", "torch.compile", "new-style"],
    ),
]

# Public Lightning and Fabric scripts (issue 32), kept in a module of their own
from corpus_frameworks import FRAMEWORK_CASES  # noqa: E402

CASES += FRAMEWORK_CASES

# Real projects (issue 40), tagged "project": a module a domain under projects/
from projects import PROJECT_CASES  # noqa: E402

CASES += PROJECT_CASES
