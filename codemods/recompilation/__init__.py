"""XLA7xx: recompilation hazards: what changes the shape or the graph of a training step.

Follows the migration guide's "Understanding Recompilations": XLA compiles one graph
per input shape and per traced program, so "strive for static shapes and computation
graphs within your main training/evaluation loops", padding inputs to fixed sizes.
See also https://docs.pytorch.org/xla/master/perf/recompilation.html.

"The training path" is approximated from the enclosing statements: code inside a
``for`` / ``while`` loop, or inside a function whose name says it runs the model
(``train``, ``step``, ``forward``, ``loss``, ``fit``, ``eval``, ``valid``, ``predict``,
``infer``), but not inside a data-side function (``__getitem__``, ``__iter__``,
``__len__``, ``__init__``, or a name with ``collate``, ``preprocess``, ``prepare``,
``load``, ``dataset``, ``tokeni[sz]e``), nor anywhere in a data set or sampler class
(its name ends in ``Dataset``, or a base class's name ends in ``Dataset`` or ``Sampler``:
``Dataset``, ``IterableDataset``, ``data.Sampler``, a ``BaseDataset`` of the project),
helpers included, such as a ``_sample_negative`` that ``__getitem__`` calls: those run on
the host, in the DataLoader's workers, where a varying shape costs nothing. Only the
innermost function counts, so a helper called from the loop is not looked at.
Straight-line module code (building a model, loading data) is never flagged.

These rules leave a CPU-only script (one that picks ``"cpu"`` and names no accelerator:
``rule.ON_ACCELERATOR``) as it is: it compiles nothing.

Both runtimes, but under TorchTPU (``--runtime torch-tpu``) only where they matter for
``torch.compile``: TorchTPU runs eagerly, where a new shape or a branch on a value costs no
compilation, and compiles only what ``torch.compile`` is given. So there the rules report only
in a file that compiles something (it refers to ``torch.compile``, as a call or a decorator, or
calls a module's ``.compile()``: ``common.hazards_matter``, decided on the whole file), in
``torch.compile``'s words: a new shape compiles the step again (until the size is marked
dynamic), and a value read or a data-dependent shape breaks the graph. XLA705 adds no
``torch_xla.sync()`` there; the other fixes (XLA701's ``drop_last=True``) are the same.
"""

# This docstring is the family's section of docs/rules.md (python -m migrate_xla.generators.docs).
# The rules are in the modules of this package (migrate_xla/engine/registry.py finds them):
#   drop_last.py              XLA701 dataloader-drop-last
#   data_dependent_shape.py   XLA702 data-dependent-shape
#   tensor_control_flow.py    XLA703 tensor-control-flow
#   variable_length_batch.py  XLA704 variable-length-batch
#   growing_shape.py          XLA705 growing-shape
#   step_sliced_data.py       XLA706 step-sliced-data
#   common.py                 the training path, the recompilation document
