"""Tables generated from installed packages and from codemods/; none is edited by hand.

Each module opens with the command that writes it (a generator in ``migrate_xla/generators/``)
and has a test that fails when it is no longer what that command would write:

- ``rule_index.py``: what the pre-filter reads of each rule (make_index; tests/test_prefilter.py);
- ``cuda_api.py``: torch.cuda's public names and verify's emulation of each (make_cuda_api;
  tests/test_cuda_api.py);
- ``xla_ops.py``: what torch_xla can run of the sparse APIs (make_xla_ops; tests/test_xla_ops.py);
- ``tpu_api.py``: torch_tpu's public API, from its wheel (make_tpu_api; tests/test_tpu_api.py);
- ``node_builders.py``: what the fast parse makes each of LibCST's node classes with, from the
  installed LibCST (make_node_builders; tests/test_engine_rules.py).

They import nothing from the project.
"""
