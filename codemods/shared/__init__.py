"""Code several rule families share: analyses and helpers, no rules.

A family (a module or package directly under ``codemods/``) imports from here and from
``migrate_xla.rule.api``, never from another family; what two families both need lives
here, under the name of what it is (tests/test_architecture.py checks it):

    device_values.py   what a device expression names (devices, amp, data_loading, cuda_only); the
                       tensors a file keeps on a device (recompilation, lazy_execution)
    training_loops.py  what a training loop looks like: optimizer names, a training step,
                       DataLoaders, evaluation data (lazy_execution, amp, recompilation, targets)
    batch_moves.py     BatchMoveProof: whether a loop's batches may come from an MpDeviceLoader
                       (data_loading's XLA302, lazy_execution's XLA203)
    statements.py      statement shapes: an import line, a line that is one call; carried and dotted names,
                       the names a node writes; a with's block unwrapped (devices' XLA112, amp's XLA408)
    run_time_configs.py  the names that hold a Hydra or OmegaConf config, what a read from a
                       config is (devices' XLA111, batch_moves)
    apex_amp.py        the references to apex's amp that XLA408 answers for, which XLA807 skips
                       (amp, cuda_only)
    launch_plan.py     what a file's mp.spawn calls need: the world sizes counted before them, the
                       workers (distributed's XLA601 and XLA604; whether sharding can call the worker once)
    sharded_models.py  whether a file shards its model the way the sharding family converts it
                       (sharding, targets' XLA671-XLA672)
    spmd_start.py      where ``xr.use_spmd()`` goes: the start of the script's run (sharding's
                       XLA620 and XLA623, targets' XLA670)
    definitions.py     functions and classes a fix writes into the file, where every use sees them
    walk.py            a fast walk of a module with each node's nearest ancestors, the whole
                       module's made once a file (amp's analyses, devices' CUDA guards, data_loading)

An analysis that the rules of one family share lives in that family's package
(``amp/scaler_analysis.py``, ``amp/dtype_choices.py``).
"""
