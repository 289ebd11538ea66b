"""Course and tutorial cases of the real-world corpus: the scripts of PyTorch courses and tutorials
(yunjey, pytorch-beginner, PyTorchZeroToAll, Kind-PyTorch-Tutorial, MorvanZhou), run as the old
style they are written in, and course and tutorial notebooks and scripts in the new style (run as
written on torch 2.9). COURSE_CASES is built with corpus_case.py's ``case`` from the commits
pinned there; corpus.py puts it in CASES after the GANs, where the rows stood when they were part
of its table.
"""

from __future__ import annotations

from corpus_case import case

MNIST = [("mnist", "data")]

ATCOLD_RES = {f: f for f in ("res/plot_lib.py", "res/ziegler.png")}  # plot_lib reads the image at import


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


COURSE_CASES = [
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
]
