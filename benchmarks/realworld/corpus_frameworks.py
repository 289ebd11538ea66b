"""Framework cases of the real-world corpus: public scripts that train through Lightning's
``Trainer`` or ``Fabric`` (issue 32), at pinned commits, laid out like corpus.py's cases.

FRAMEWORK_CASES is built with corpus.py's ``case(...)``; corpus.py appends it to CASES. The
repositories' commits are added to corpus.REPOS here (the same commit where corpus.py already
pins one). Each case is tagged "framework" and with its framework's name.

What was looked for and left out: Hugging Face ``Trainer`` and Accelerate scripts that run
with no download. accelerate's examples (at 16cb6eb) all load bert-base-cased and GLUE, or a
pretrained timm ResNet (cv_example.py); huggingface/transformers' examples (the legacy
run_language_modeling.py would take a local config and tokenizer) could not be fetched: the
repository is 1.3 GB.
"""

from __future__ import annotations

from corpus import case, pin

FRAMEWORK_REPOS = {
    "Lightning-AI/pytorch-lightning": "7f0c3436cd3f6ad3753125672024fc415cbcb414",
    "Lightning-AI/tutorials": "15817658a2d63afa338b9e1cd8454fb98d746fac",
    "rasbt/machine-learning-book": "35ab3774e8e249c43a98209d8efd94c060102003",
}
pin(FRAMEWORK_REPOS)

PL = "Lightning-AI/pytorch-lightning"
MNIST_60K = {"n_train": 60000}  # the scripts split 60,000 training images into 55,000 and 5,000

FRAMEWORK_CASES = [
    case(
        "pl_gan_template",
        PL,
        ["examples/pytorch/domain_templates/generative_adversarial_net.py"],
        "generative_adversarial_net.py",
        cwd="examples/pytorch/domain_templates",
        # lightning.pytorch.demos' MNISTDataModule: torchvision's MNIST under ./data, 5,000 for validation
        data=[("mnist", "data", {"n_train": 6000})],
        tags=["framework", "lightning", "Trainer(accelerator='gpu')", "gan", "manual-optimization", "mnist"],
    ),
    case(
        "pl_transformer_lm",
        PL,
        ["examples/pytorch/basics/transformer.py"],
        "transformer.py",
        cwd="examples/pytorch/basics",
        # lightning.pytorch.demos.WikiText2 reads ./data/wikitext-2.txt (downloads it if missing)
        data=[("words", "data/wikitext-2.txt", {"lines": 16000})],
        tags=["framework", "lightning", "Trainer(accelerator='auto')", "transformer", "gradient_clip_val"],
    ),
    case(
        "fabric_image_classifier",
        PL,
        ["examples/fabric/image_classifier/train_fabric.py"],
        "train_fabric.py",
        ["--epochs", "1"],
        cwd="examples/fabric/image_classifier",
        data=[("mnist", "../../../Datasets")],  # DATASETS_PATH, next to examples/
        tags=["framework", "fabric", "Fabric()", "cnn", "mnist", "Adadelta", "StepLR", "torchmetrics"],
    ),
    case(
        "fabric_language_model",
        PL,
        ["examples/fabric/language_model/train.py"],
        "train.py",
        cwd="examples/fabric/language_model",
        data=[("words", "data/wikitext-2.txt", {"lines": 16000})],
        tags=["framework", "fabric", "Fabric()", "transformer", "clip_gradients"],
    ),
    case(
        "tutorial_basic_gan",
        "Lightning-AI/tutorials",
        ["lightning_examples/basic-gan/gan.py"],
        "gan.py",
        cwd="lightning_examples/basic-gan",
        data=[("mnist", ".", MNIST_60K)],  # PATH_DATASETS defaults to "."
        tags=["framework", "lightning", "Trainer(accelerator='auto')", "gan", "torch.cuda.is_available batch size"],
    ),
    case(
        "tutorial_mnist_hello_world",
        "Lightning-AI/tutorials",
        ["lightning_examples/mnist-hello-world/hello-world.py"],
        "hello-world.py",
        cwd="lightning_examples/mnist-hello-world",
        data=[("mnist", ".", MNIST_60K)],
        stubs=["pandas", "seaborn", "IPython"],
        tags=["framework", "lightning", "Trainer(accelerator=config.accelerator)", "mlp", "mnist", "dataclass config"],
    ),
    case(
        "mlbook_ch13_lightning",
        "rasbt/machine-learning-book",
        # the script imports python_environment_check (at the top of the repository) before it puts ".." on
        # sys.path, so it runs only with that module importable: laid out next to it, as a reader would
        {
            "ch13/ch13_part3_lightning.py": "ch13/ch13_part3_lightning.py",
            "python_environment_check.py": "ch13/python_environment_check.py",
        },
        "ch13_part3_lightning.py",
        cwd="ch13",
        data=[("mnist", ".", MNIST_60K)],
        tags=["framework", "lightning", "Trainer(gpus=1) (Lightning 1.x)", "training_epoch_end", "book", "mlp"],
    ),
]
