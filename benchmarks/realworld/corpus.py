"""The case table of our own real-world corpus: public GPU training scripts at pinned commits.

Nothing here is the scripts' code: each case names a repository (owner/name), a commit, the files
to check out (repository path -> path in the case folder), the script and the folder it runs in
(both relative to the case folder), small arguments, extra environment, the data generators of
prepare.py that write what it reads (generator, path relative to the run folder, inside the case
folder; options), stand-ins for
packages it imports that this machine lacks (prepare.STUBS), and tags (domain, style).
A ``.ipynb`` source mapped to a ``.py`` path is converted (code cells joined, magics dropped):
a course notebook as a user would export it.
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


def _yunjey(name, sub, tags, files=(), data=None):
    d = f"tutorials/{sub}"
    return case(
        f"yunjey_{name}",
        "yunjey/pytorch-tutorial",
        [f"{d}/main.py", *(f"{d}/{f}" for f in files)],
        "main.py",
        cwd=d,
        data=data or [("mnist", "../../data")],
        tags=["course", *tags],
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


def _beginner(name, path, tags, data=(), extra=()):
    d, script = path.rsplit("/", 1)
    return case(
        f"beginner_{name}",
        "L1aoXingyu/pytorch-beginner",
        [path, *(f"{d}/{f}" for f in extra)],
        script,
        cwd=d,
        data=data,
        tags=["course", "old-style", "Variable", *tags],
    )


def _hunkim(name, script, tags, extra=(), data=()):
    return case(
        f"zerotoall_{name}",
        "hunkim/PyTorchZeroToAll",
        [script, *extra],
        script,
        data=data,
        tags=["course", *tags],
    )


CORA = [("cora", "data/cora")]  # pyGAT reads ./data/cora/
CORA_UP = [("cora", "../data/cora")]  # pygcn reads ../data/cora/
MNIST = [("mnist", "data")]
ATCOLD_RES = {f: f for f in ("res/plot_lib.py", "res/ziegler.png")}  # plot_lib reads the image at import

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
    # course scripts
    _yunjey("feedforward", "01-basics/feedforward_neural_network", ["mlp", "mnist"]),
    _yunjey("cnn", "02-intermediate/convolutional_neural_network", ["cnn", "mnist", "batchnorm"]),
    _yunjey("rnn", "02-intermediate/recurrent_neural_network", ["rnn", "lstm", "mnist"]),
    _yunjey("birnn", "02-intermediate/bidirectional_recurrent_neural_network", ["rnn", "bilstm", "mnist"]),
    _yunjey(
        "language_model",
        "02-intermediate/language_model",
        ["nlp", "lstm-lm", "clip_grad_norm", "multinomial-sampling"],
        files=["data_utils.py"],
        data=[("words", "data/train.txt")],
    ),
    _yunjey("gan", "03-advanced/generative_adversarial_network", ["gan", "mnist"]),
    _yunjey("vae", "03-advanced/variational_autoencoder", ["vae", "mnist"]),
    case(
        "kind_mnist_cnn_gpu",
        "GunhoChoi/Kind-PyTorch-Tutorial",
        ["04_MNIST_CNN/MNIST_CNN_gpu.py"],
        "MNIST_CNN_gpu.py",
        cwd="04_MNIST_CNN",
        data=[("mnist", ".")],
        tags=["course", "cnn", "old-style", "Variable", "mnist"],
    ),
    case(
        "kind_denoising_ae",
        "GunhoChoi/Kind-PyTorch-Tutorial",
        ["07_Denoising_Autoencoder/Denoising_Autoencoder.py"],
        "Denoising_Autoencoder.py",
        cwd="07_Denoising_Autoencoder",
        data=[("mnist", ".")],
        tags=["course", "autoencoder", "old-style", "Variable", "mnist"],
    ),
    _beginner("rnn", "05-Recurrent Neural Network/recurrent_network.py", ["rnn", "mnist"], data=MNIST),
    _beginner("conv_gan", "09-Generative Adversarial network/conv_gan.py", ["gan", "mnist"], data=MNIST),
    _beginner(
        "vae", "08-AutoEncoder/Variational_autoencoder.py", ["vae", "torch.cuda.FloatTensor", "mnist"], data=MNIST
    ),
    _beginner(
        "language_model",
        "07-Language Model/language model.py",
        ["nlp", "lstm-lm"],
        data=[
            ("words", "data/train.txt"),
            ("words", "data/valid.txt"),
            ("words", "data/test.txt"),
        ],  # Corpus(path="./data")
        extra=["data_utils.py"],
    ),
    _beginner("seq_lstm", "06-Natural Language Process/seq-lstm.py", ["nlp", "pos-tagging", "char-lstm"]),
    _beginner(
        "fashion_mlp",
        "03-Neural Network/neural_network.py",
        ["mlp", "fashion-mnist"],
        data=[("fashion_mnist", "../datasets")],
    ),
    _hunkim(
        "softmax_mnist",
        "09_2_softmax_mnist.py",
        ["mlp", "mnist", "from torch import cuda"],
        data=[("mnist", "mnist_data")],
    ),
    _hunkim(
        "rnn_classification",
        "13_2_rnn_classification.py",
        ["nlp", "gru", "pack_padded_sequence", "device_count"],
        extra=["name_dataset.py"],
        data=[("names_csv_gz", "data")],
    ),
    _hunkim(
        "char_rnn",
        "13_3_char_rnn.py",
        ["nlp", "char-rnn"],
        extra=["text_loader.py"],
        data=[("text_gz", "data/shakespeare.txt.gz")],
    ),
    _hunkim(
        "seq2seq_att",
        "14_2_seq2seq_att.py",
        ["nlp", "seq2seq", "attention"],
        extra=["text_loader.py", "seq2seq_models.py"],
        data=[("text_gz", "data/shakespeare.txt.gz")],
    ),
    case(
        "morvan_gpu",
        "MorvanZhou/PyTorch-Tutorial",
        {"tutorial-contents/502_GPU.py": "502_GPU.py"},
        "502_GPU.py",
        data=[("mnist", "mnist")],
        tags=["course", "cnn", "old-style", "mnist"],
    ),
    # course scripts and notebooks, new style (run as written on torch 2.9)
    case(
        "modular_tinyvgg",
        "mrdbourke/pytorch-deep-learning",
        {
            f"going_modular/going_modular/{f}": f
            for f in ("train.py", "data_setup.py", "engine.py", "model_builder.py", "utils.py")
        },
        "train.py",
        data=[
            ("image_classes", "data/pizza_steak_sushi/train", {"n": 40}),
            ("image_classes", "data/pizza_steak_sushi/test", {"n": 8}),
        ],
        tags=["course", "cnn", "ImageFolder", "multi-file", "pin_memory", "num_workers=cpu_count", "inference_mode"],
    ),
    case(
        "bentrevett_lenet_notebook",
        "bentrevett/pytorch-image-classification",
        {"2_lenet.ipynb": "lenet.py"},
        "lenet.py",
        data=[("mnist", ".data")],
        stubs=["sklearn", "ipywidgets", "IPython"],
        tags=["course", "cnn", "mnist", "notebook-converted", "random_split", "tqdm.notebook", "best-checkpoint"],
    ),
    case(
        "cvae_mnist",
        "timbmg/VAE-CVAE-MNIST",
        ["train.py", "models.py", "utils.py"],
        "train.py",
        ["--conditional"],
        data=[("mnist", "data")],
        stubs=["pandas", "seaborn"],
        tags=["vae", "conditional", "mnist", "per-sample .item()", "matplotlib savefig", "multi-file"],
    ),
    case(
        "ptrblck_unet_demo",
        "ptrblck/pytorch_misc",
        ["unet_demo.py"],
        "unet_demo.py",
        tags=["segmentation", "U-Net", "synthetic-data", "if cuda.is_available: .to('cuda')", "one step"],
    ),
    case(
        "udacity_skipgram_notebook",
        "udacity/deep-learning-v2-pytorch",
        {
            "word2vec-embeddings/Skip_Grams_Solution.ipynb": "skip_grams.py",
            "word2vec-embeddings/utils.py": "utils.py",
        },
        "skip_grams.py",
        data=[("text8", "data/text8")],
        tags=["course", "nlp", "word2vec", "full-softmax", "notebook-converted"],
    ),
    case(
        "udacity_negsampling_notebook",
        "udacity/deep-learning-v2-pytorch",
        {
            "word2vec-embeddings/Negative_Sampling_Solution.ipynb": "negative_sampling.py",
            "word2vec-embeddings/utils.py": "utils.py",
        },
        "negative_sampling.py",
        data=[("text8", "data/text8")],
        tags=["course", "nlp", "word2vec", "negative-sampling", "multinomial", "weight.is_cuda", "notebook-converted"],
    ),
    case(
        "atcold_spiral_notebook",
        "Atcold/NYU-DLSP20",
        {"04-spiral_classification.ipynb": "spiral.py", **ATCOLD_RES},
        "spiral.py",
        stubs=["IPython"],
        tags=["course", "mlp", "synthetic-data", "data built on the device", "full-batch", "notebook-converted"],
    ),
    case(
        "atcold_seq_notebook",
        "Atcold/NYU-DLSP20",
        {
            "08-seq_classification.ipynb": "seq_classification.py",
            "res/sequential_tasks.py": "res/sequential_tasks.py",
            **ATCOLD_RES,
        },
        "seq_classification.py",
        stubs=["IPython"],
        tags=["course", "rnn", "lstm", "synthetic-sequences", "notebook-converted"],
    ),
    case(
        "rasbt_gan_notebook",
        "rasbt/deeplearning-models",
        {"pytorch_ipynb/gan/gan.ipynb": "gan.py"},
        "gan.py",
        data=[("mnist", "data")],
        tags=["gan", "mnist", "device 'cuda:2'", "loss tensors kept in a list", "notebook-converted"],
    ),
    case(
        "rasbt_gnn_notebook",
        "rasbt/deeplearning-models",
        {"pytorch_ipynb/gnn/gnn-basic-1.ipynb": "gnn.py"},
        "gnn.py",
        data=[("mnist", "data", {"n_train": 60000, "n_test": 512})],  # Subset(arange(0, 59000))
        tags=["graph", "GCN-on-pixels", "register_buffer", "bmm", "scipy", "num_workers", "notebook-converted"],
    ),
    case(
        "mlbook_dcgan_notebook",
        "rasbt/machine-learning-book",
        {"ch17/ch17_part2.ipynb": "ch17/ch17_part2.py", "python_environment_check.py": "python_environment_check.py"},
        "ch17_part2.py",
        cwd="ch17",
        data=[("mnist", ".")],
        stubs=["IPython"],
        tags=["gan", "DCGAN", "WGAN-GP", "autograd.grad", "mnist", "book", "notebook-converted"],
    ),
    case(
        "vae_tutorial_notebook",
        "Jackson-Kang/Pytorch-VAE-tutorial",
        {"01_Variational_AutoEncoder.ipynb": "vae.py"},
        "vae.py",
        env={"HOME": "{case}"},  # MNIST('~/datasets')
        data=[("mnist", "datasets", {"n_train": 1200})],  # x.view(batch_size, 784): full batches of 100
        tags=["vae", "mnist", "cuda = True", "pin_memory", "notebook-converted"],
    ),
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
