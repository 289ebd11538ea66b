"""Where and why two verify runs differ, or why the migrated run is slow.

Each finding names its cause in the migration's own words and, where one applies, the
rule or guide section that deals with it. Blocking findings make the verdict a mismatch
even when the losses agree: a model with other parameters, an optimizer that updates
tensors the model no longer reads, a precision the user did not choose, a loop whose
steps are never cut into graphs.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

from migrate_xla.verify.progress import RECOMPILING

# The rules that deal with each cause (see `xla-migrate explain CODE`).
PARAMETER_IDENTITY_RULE = "XLA109"
SYNC_RULE = "XLA201"
RECOMPILATION_GUIDE = "guide: Understanding Recompilations"
CUDA_LEFT_RULE = "XLA899"
# how torch fails on CUDA code where there is no GPU
CUDA_LEFT = re.compile(
    r"NVIDIA driver|not compiled with CUDA|CUDA_VISIBLE_DEVICES|cuda.*(not available|unavailable)", re.I
)
COMPILE_RULE = "XLA810"
# torch.compile with a backend for GPUs and CPUs where XLA810's fix did not apply (--ignore, noqa): inductor
# failing on XLA tensors, or refused by the TorchTPU emulation (child/compiled.py)
GPU_COMPILE = re.compile(r"torch\._inductor|InductorError|compiles GPU \(Triton\) or CPU code")
GPU_BACKENDS = ("inductor", "cudagraphs")
# How a migrated run fails on code the migration reported and left for a person: the
# exception, what it means, the rule whose finding says what to write instead.
KNOWN_CRASHES = (
    (CUDA_LEFT, "CUDA code left in the migration (see `xla-migrate --check`)", CUDA_LEFT_RULE),
    (
        GPU_COMPILE,
        "torch.compile with inductor, which compiles for GPUs and CPUs, not for the target device: XLA810's "
        "fix, which applies by default, did not apply here (--ignore XLA810, a noqa comment, a backend it "
        "cannot read): on PyTorch/XLA it drops torch.compile, the lazy tensor compiling the whole step",
        COMPILE_RULE,
    ),
    (
        re.compile(r"Couldn't swap \S*weight_[gv]"),
        "a module with the hook-based weight_norm moved with parameters swapped on conversion (XLA109)",
        "XLA113",
    ),
    (
        re.compile(r"_share_fd_: only available on CPU"),
        "a model in shared memory (Hogwild training): XLA tensors cannot be shared between processes; "
        "XLA612's fix (held back, since it trains data parallel instead; --unsafe-fixes applies it) "
        "launches the workers with torch_xla.launch",
        "XLA611",
    ),
    (
        re.compile(r"'SparseXLA' backend"),
        "a sparse tensor on the XLA device, which has no sparse kernels: XLA902's fix (held back, since a dense "
        "matrix takes n x n memory; --unsafe-fixes applies it) makes it dense (torch.spmm -> torch.mm)",
        "XLA902",
    ),
    (
        re.compile(r"SyncBatchNorm expected input tensor to be on GPU"),
        "nn.SyncBatchNorm on the XLA device, which it refuses: XLA613's fix (held back, since several devices "
        "then normalise their own batches; --unsafe-fixes applies it) keeps the model's batch norms",
        "XLA613",
    ),
    (
        re.compile(r"module 'torch' has no attribute 'xla'|torch has no module of `xla`"),
        "torch's activation checkpointing on the XLA device, which fails there (it asks for a torch.xla device "
        "module): XLA906's fix, which applies by default, did not apply here (--ignore XLA906, a noqa comment, "
        "checkpoint_sequential or FSDP's checkpoint wrapper, which it flags): torch_xla's checkpoint replaces it",
        "XLA906",
    ),
    (
        re.compile(r"data is not allocated yet|PackedSequence is not supported"),
        "an RNN on a PackedSequence, which torch_xla runs on no XLA device: give it the padded batch "
        "(XLA905 flagged the line that packs it, with what changes)",
        "XLA905",
    ),
    # a TorchTPU migration's run (the tpu device emulated, child/tpu_emulation.py)
    (
        re.compile(r"import of torch_xla\S* halted|No module named 'torch_xla"),
        "torch_xla in a TorchTPU migration: TorchTPU runs with torch >= 2.11, which no torch_xla release "
        "pairs with (migrate with --runtime torch-tpu; the emulated run has no torch_xla)",
        None,
    ),
    (
        re.compile(r"module 'torch\.tpu\S*' has no attribute"),
        "a name torch.tpu does not have (TorchTPU's public names: migrate_xla/generated/tpu_api.py)",
        None,
    ),
    (
        re.compile(r"is TorchTPU's own: verify's CPU emulation"),
        "a TorchTPU feature the CPU emulation cannot run: verify this script on a TPU",
        None,
    ),
)


@dataclass
class Finding:
    kind: str
    message: str
    blocking: bool = False  # makes the verdict a mismatch
    file: str | None = None
    line: int | None = None
    rule: str | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "file": self.file, "line": self.line, "rule": self.rule}


def diagnose(result) -> list[Finding]:
    ref, mig = result.reference, result.migrated
    findings: list[Finding] = []
    # a crash first: what else a run that died says follows from it
    findings += _crash(ref) + _crash(mig)
    if _built_its_model(ref) and _built_its_model(mig):
        findings += _parameters(ref.parameters, mig.parameters, "tpu" if getattr(mig, "emulates_tpu", False) else "XLA")
    findings += _precision(ref.precision, mig.precision)
    findings += _seeding(ref.seeded_by_script, mig.seeded_by_script) if ref.losses and mig.losses else []
    findings += _first_tensor(result)
    findings += _first_op(result)
    # PyTorch/XLA's own: a TorchTPU run is eager, with no graphs to cut or compile
    if not getattr(mig, "emulates_tpu", False):
        findings += _steps_not_cut(mig)
        findings += _recompilations(mig)
        findings += _host_reads(mig)
    for op, count in sorted(mig.cpu_fallback_ops.items()):
        findings.append(
            Finding(
                "cpu-fallback",
                f"{op} ran {count} times on the CPU (no XLA lowering): replace the op or move it out of the step",
                rule="XLA7",
            )
        )
    findings += _compiled(ref, mig)
    if ref.seeded_by_script == [] and not mig.seeded_by_script and result.seed is not None:
        findings.append(
            Finding(
                "unseeded",
                f"the script never seeds torch, random or NumPy: both runs started from "
                f"the verify seed {result.seed} (--seed)",
            )
        )
    return findings


def _seeding(ref: list[str] | None, mig: list[str] | None) -> list[Finding]:
    """The training processes of two runs that trained seeded other generators: a script that seeds its
    parent and trains in mp.spawn's worker, whose SPMD form trains in the parent (XLA601's one call)."""
    if ref is None or mig is None or set(ref) == set(mig):
        return []
    only = {"the migrated": sorted(set(mig) - set(ref)), "the reference": sorted(set(ref) - set(mig))}
    seeded = "; ".join(f"{run} run's seeds {', '.join(what)}" for run, what in only.items() if what)
    message = (
        f"the processes that trained were seeded differently ({seeded} in the process that trains, the "
        "other's not): they start from other random states, so the initial weights and dropout differ; "
        "a worker the script starts itself starts from its own: seed where the training runs"
    )
    return [Finding("seeding", message, rule="XLA601")]


# A parametrized weight's parts, as the hook-based weight_norm named them (XLA113 makes one the other)
PARAMETRIZED = re.compile(r"\.parametrizations\.(\w+)\.original([01])$")


def _tied(groups: list[list[str]]) -> list[list[str]]:
    """Tied groups, with ``conv.parametrizations.weight.original0`` / ``original1`` named
    ``conv.weight_g`` / ``conv.weight_v``: the same tensors under torch's two weight norms."""
    return [
        [PARAMETRIZED.sub(lambda m: f".{m.group(1)}_{'gv'[int(m.group(2))]}", name) for name in group]
        for group in groups
    ]


def _parameters(ref: dict | None, mig: dict | None, device: str = "XLA") -> list[Finding]:
    if not ref or not mig or "error" in ref or "error" in mig:
        return []
    found = []
    ref_tied, mig_tied = _tied(ref["tied"]), _tied(mig["tied"])
    if (ref["tensors"], ref["numel"]) != (mig["tensors"], mig["numel"]) or ref_tied != mig_tied:
        untied = [group for group in ref_tied if group not in mig_tied]
        why = (
            f"; tied in the reference, apart in the migration: {', '.join(' = '.join(g) for g in untied)}"
            if untied
            else ""
        )
        found.append(
            Finding(
                "parameters",
                f"the models differ: reference {ref['numel']:,} parameters in {ref['tensors']} tensors, migrated "
                f"{mig['numel']:,} in {mig['tensors']}{why} (moving a module to the {device} device replaces its parameters; "
                "weights tied by assignment come apart)",
                blocking=True,
                rule=PARAMETER_IDENTITY_RULE,
            )
        )
    stale = mig.get("stale_in_optimizer", 0) - ref.get("stale_in_optimizer", 0)
    orphaned = mig.get("not_in_optimizer", 0) - ref.get("not_in_optimizer", 0)
    if stale > 0 or orphaned > 0:
        found.append(
            Finding(
                "stale-optimizer",
                f"{max(orphaned, 0)} parameters of the migrated model got gradients but no optimizer updates them, and its "
                f"optimizers hold {max(stale, 0)} tensors the model no longer uses: an optimizer built before the model "
                f"moved to the {device} device updates the old copies",
                blocking=True,
                rule=PARAMETER_IDENTITY_RULE,
            )
        )
    return found


def _precision(ref: str, mig: str) -> list[Finding]:
    # float16 on the GPU becomes bfloat16 on XLA; a float32 run must stay float32.
    if ref == "float32" and mig != "float32":
        return [
            Finding(
                "precision",
                f"the reference trains in float32, the migration in {mig}: the migration "
                "overrode the script's precision choice",
                blocking=True,
                rule="XLA4",
            )
        ]
    return []


def _first_tensor(result) -> list[Finding]:
    """With --diagnose: the first parameter or gradient whose norm differs, step by step."""
    ref, mig = result.reference.tensors_by_step, result.migrated.tensors_by_step
    for step, (a, b) in enumerate(zip(ref, mig), start=1):
        for name in a:
            if name not in b:
                continue
            x, y = a[name], b[name]
            if not (isinstance(x, float) and isinstance(y, float)):
                continue
            if abs(x - y) > result.atol + result.rtol * abs(x):
                kind = "gradient" if name.endswith(".grad") else "parameter"
                return [
                    Finding(
                        "first-tensor",
                        f"first difference at step {step}: the {kind} {name.removesuffix('.grad')} "
                        f"(norm {x:.6g} in the reference, {y:.6g} migrated)",
                    )
                ]
        missing = sorted(set(a) ^ set(b))
        if missing:
            return [Finding("first-tensor", f"at step {step} only one run has: {', '.join(missing[:5])}")]
    return []


def _first_parameter_step(result) -> int | None:
    """The first step (1-based) after whose update a parameter differs."""
    ref, mig = result.reference.tensors_by_step, result.migrated.tensors_by_step
    for step, (a, b) in enumerate(zip(ref, mig), start=1):
        for name, x in a.items():
            y = b.get(name)
            if name.endswith(".grad") or not (isinstance(x, float) and isinstance(y, float)):
                continue
            if abs(x - y) > result.atol + result.rtol * abs(x):
                return step
    return None


def _first_op(result) -> list[Finding]:
    """With --diagnose: the first operation whose output differs while what went in agrees, in
    the order they ran: a step's forward pass, then its backward pass (from the loss back).
    Steps after the first parameter difference are left out: their ops only see other weights."""
    last = _first_parameter_step(result)
    ref_steps, mig_steps = result.reference.ops_by_step, result.migrated.ops_by_step

    def differs(x, y) -> bool:
        return isinstance(x, float) and isinstance(y, float) and abs(x - y) > result.atol + result.rtol * abs(x)

    def where(op) -> str:
        return f" at {op['file']}:{op['line']}" if op.get("file") else ""

    for step, (ref_ops, mig_ops) in enumerate(zip(ref_steps, mig_steps), start=1):
        if last is not None and step > last:
            break
        matcher = difflib.SequenceMatcher(
            None, [op["name"] for op in ref_ops], [op["name"] for op in mig_ops], autojunk=False
        )
        pairs = [
            (ref_ops[i1 + k], mig_ops[j1 + k])
            for tag, i1, i2, j1, _ in matcher.get_opcodes()
            if tag == "equal"
            for k in range(i2 - i1)
        ]
        for a, b in pairs:
            if differs(a["out"], b["out"]):
                return _op_finding(
                    f"first differing operation: the forward of {a['name']}{where(b)} at step {step} "
                    f"(output norm {a['out']:.6g} in the reference, {b['out']:.6g} migrated; "
                    "the operations before it agree)",
                    b,
                )
        backward = sorted((p for p in pairs if p[0].get("order") is not None), key=lambda p: p[0]["order"])
        for a, b in backward:
            if differs(a.get("grad_out"), b.get("grad_out")):
                return _op_finding(
                    f"first differing gradient: the one reaching {a['name']}{where(b)} in the backward pass "
                    f"of step {step} (norm {a['grad_out']:.6g} in the reference, {b['grad_out']:.6g} migrated), "
                    "from an operation that was not recorded",
                    b,
                )
            bad = [
                (i, x, y) for i, (x, y) in enumerate(zip(a.get("grad_in", []), b.get("grad_in", []))) if differs(x, y)
            ]
            if bad:
                i, x, y = bad[0]
                return _op_finding(
                    f"first differing operation: the backward of {a['name']}{where(b)} at step {step}: the "
                    f"gradient reaching it agrees (norm {a['grad_out']:.6g}), the gradient it returns for its "
                    f"input {i + 1} does not (norm {x:.6g} in the reference, {y:.6g} migrated): with the "
                    "forward pass agreeing, a defect of the migrated runtime's backward of this operation "
                    "(or of its use)",
                    b,
                )
    return []


# Operations whose torch_xla 2.9 kernels compute otherwise than CUDA's, and the rule whose fix
# avoids them (docs/runtime_defects.md)
RUNTIME_DEFECTS = {
    "elu": ("torch_xla 2.9's backward of ELU is wrong for negative inputs", "XLA901"),
    "selu": ("torch_xla 2.9's backward of SELU is wrong for negative inputs", "XLA901"),
    "celu": ("torch_xla 2.9's backward of CELU is wrong for negative inputs", "XLA901"),
}


def _op_finding(message: str, record: dict) -> list[Finding]:
    """The first differing operation, at the user's line where the migrated run recorded it,
    with the runtime defect and rule that cover it where one does."""
    defect, rule = RUNTIME_DEFECTS.get(record.get("name", ""), (None, None))
    if defect:
        message = f"{message}: {defect}, which {rule}'s fix avoids (`xla-migrate explain {rule}`)"
    return [Finding("first-op", message, file=record.get("file"), line=record.get("line"), rule=rule)]


def _steps_not_cut(run) -> list[Finding]:
    """A training loop without a torch_xla.sync() a step: fewer graph executions than steps
    (the lazy graph grows until something reads a value: a loss printed every 10 steps),
    no graph run between steps, or a bigger graph compiled every step."""
    executions, compilations = run.executions_by_step, run.compilations_by_step
    if run.compilations == 0 and not run.executions and not run.error:
        # a match must mean the migrated run trained on the device: this one never touched it
        return [
            Finding(
                "not-on-xla",
                "the migrated run never ran on the XLA device (0 graphs compiled, 0 executed): it trained "
                "on the CPU, so its losses say nothing about XLA (a device choice the script's arguments "
                "left on its CPU branch, or a framework still on its CPU accelerator?)",
                blocking=True,
            )
        ]
    if run.error:
        return []
    # A GAN steps two optimizers an iteration and syncs once: an iteration, not every step,
    # must run a graph.
    optimizers = max(1, (run.parameters or {}).get("optimizers", 1) or 1)
    # optimizer steps, or backward passes where the script updates by hand
    steps = run.steps_done or len(run.losses)
    what = None
    # (one short of the steps is left to an execution still counted when the run stopped)
    if run.executions is not None and steps >= 3 and run.executions * optimizers + 1 < steps:
        what = "fewer graph executions than steps"
    elif len(executions) >= 3:
        # Half of an execution a step leaves room for a host read instead of a sync.
        ran = executions[-1] - executions[1]
        second_half = compilations[len(compilations) // 2 :]
        # three points at least: the first steps of a short run compile their graphs one by one
        growing = len(second_half) >= 3 and all(b > a for a, b in zip(second_half, second_half[1:]))
        # Graphs a step's own sync compiled: the steps are cut, and a new graph each step is a
        # recompilation (a layer-wise trainer moving to its next layer; a slice by the step's
        # number; graphs a value read cut), told by _recompilations, not an uncut step.
        # (the last of the causes: the debug file can miss a graph, so counts are no indexes into it)
        count = second_half[-1] - second_half[0]
        late = run.compile_causes[-count:] if growing and count and run.compile_causes else []
        if growing and not (late and any(_at_a_sync(c["cause"]) for c in late)):
            what = "a new, bigger graph compiled at every step, none at a torch_xla.sync()"
        elif ran * 2 * optimizers < len(executions) - 2:
            what = "no graph ran between steps"
    if what is None:
        return []
    counted = f"{steps} steps ran in {run.executions} graph executions; " if run.executions is not None else ""
    return [
        Finding(
            "steps-not-cut",
            f"the migrated training steps are not cut into graphs ({counted}{what}): each step "
            "must end in torch_xla.sync() (or iterate an MpDeviceLoader)",
            blocking=True,
            rule=SYNC_RULE,
        )
    ]


def _host_reads(run) -> list[Finding]:
    """Values read from the device in the middle of a step (``loss.item()`` before
    ``backward()``): each read runs the graph traced so far and waits for it. Slow on a TPU,
    not wrong: a warning with the line, from the graphs such reads compiled."""
    if run.error or not (run.compile_causes or run.execution_causes):
        return []
    if run.execution_causes:
        # a read that runs a graph in at least half of the steps: a read once before training (a
        # model copied to the CPU to log its graph) or every N steps costs nothing worth a warning
        reads = [c for c in run.execution_causes if "access tensor value" in c["cause"]]
        file, line, count = _user_line(reads)
        if count < max(2, len(run.losses) // 2):
            return []
        cut = f"{count} of the run's {len(run.execution_causes)} graph executions ran there"
    else:
        reads = [c for c in run.compile_causes if "access tensor value" in c["cause"]]
        file, line, count = _user_line(reads)
        cut = f"{count} of the run's graphs were cut there"
    if not file:
        return []
    return [
        Finding(
            "host-read",
            f"a value is read from the device at {file}:{line} ({cut}): "
            "each read runs the step's graph so far and waits for the device; read it after "
            "torch_xla.sync(), or every N steps",
            file=file,
            line=line,
            rule="XLA202",
        )
    ]


def _at_a_sync(cause: str) -> bool:
    """Whether torch_xla compiled a graph because the step was cut there (PT_XLA_DEBUG_LEVEL=2's
    "user torch_xla.sync", "... in parallel loader at step end"), not at a read of a value
    ("most likely user code trying to access tensor value before torch_xla.sync")."""
    return cause in ("user torch_xla.sync", "user mark_step") or cause.endswith("in parallel loader at step end")


def _user_line(causes: list[dict]) -> tuple[str | None, int | None, int]:
    lines = Counter((c["file"], c["line"]) for c in causes if c.get("file"))
    if not lines:
        return None, None, 0
    (file, line), count = lines.most_common(1)[0]
    return file, line, count


def _recompilations(run) -> list[Finding]:
    if not run.recompilations or run.error:
        return []
    late = run.compile_causes[len(run.compile_causes) - run.recompilations :] if run.compile_causes else []
    file, line, count = _user_line(late)
    where = f"; most from {file}:{line} ({count})" if file else ""
    cause = Counter(c["cause"] for c in late).most_common(1)[0][0] if late else ""
    return [
        Finding(
            "recompilation",
            f"{run.recompilations} graphs compiled in the second half of the run"
            f"{where}{f' ({cause})' if cause else ''}: shapes, Python numbers or control flow change between "
            "steps (pad to fixed shapes, drop_last=True; a slice by the step's number is a new constant each "
            "step: XLA706)",
            file=file,
            line=line,
            rule=RECOMPILATION_GUIDE,
        )
    ]


def _built_its_model(run) -> bool:
    """Whether the run got as far as training (a backward pass): a run that crashed before it
    has no model to compare."""
    return not run.error or bool(run.losses)


def _compiled(ref, mig) -> list[Finding]:
    """How each run ran what the script compiles with torch.compile (child/compiled.py): the
    reference eagerly; the migrated run of a PyTorch/XLA migration with Dynamo and its backend."""
    findings = []
    ref_sites, mig_sites = getattr(ref, "compiled", []), getattr(mig, "compiled", [])
    for index in range(max(len(ref_sites), len(mig_sites))):
        site = ref_sites[index] if index < len(ref_sites) else mig_sites[index]
        parts = []
        for run, sites in (("the reference", ref_sites), ("the migrated run", mig_sites)):
            how = sites[index] if index < len(sites) else None
            if how is None or how.get("ran") == "refused":
                continue  # the crash says it
            if sites is mig_sites and how.get("backend") in GPU_BACKENDS and mig.error:
                continue  # inductor on the target device: the crash says it
            if how.get("ran") == "eagerly":
                parts.append(f"{run} ran it eagerly (backend {how.get('backend')}: {how.get('why')})")
            else:
                why = "; ".join(
                    filter(None, [how.get("why") or "Dynamo", how.get("fullgraph") and "fullgraph relaxed"])
                )
                parts.append(f"{run} compiled it with {how.get('backend')} ({why})")
        if parts:
            where = f" at {site['file']}:{site['line']}" if site.get("file") else ""
            message = f"torch.compile{where}: {'; '.join(parts)}"
            findings.append(Finding("compiled", message, file=site.get("file"), line=site.get("line")))
    return findings


def _recompiling(run) -> list[Finding]:
    """A migrated run stopped for compiling new graphs at every step (progress.RecompilingWatch):
    where the shapes change, the library's line and the user's call into it."""
    late = run.compile_causes[len(run.compile_causes) // 2 :]
    file, line, _ = _user_line(late)
    libraries = Counter(
        (c["library"]["name"], c["library"]["version"], c["library"]["path"], c["library"]["line"])
        for c in late
        if c.get("library")
    )
    where = []
    if libraries:
        (name, version, path, at), count = libraries.most_common(1)[0]
        where.append(f"{path}:{at} ({name} {version or ''}".rstrip() + f"; {count} of the later graphs)")
    if file:
        where.append(f"called from {file}:{line}" if where else f"{file}:{line}")
    return [
        Finding(
            "recompiling",
            f"the migrated run {run.error.removeprefix('stopped: ')}: the shapes change with the data"
            + (f", at {', '.join(where)}" if where else "")
            + ". On a TPU each new shape is a new compilation too: give the model fixed shapes (pad inputs and "
            "targets to fixed sizes; for a detection model, a fixed number of proposals and detections)",
            file=file,
            line=line,
            rule=RECOMPILATION_GUIDE,
        )
    ]


def _crash(run) -> list[Finding]:
    """A run that failed with a traceback: the exception and the user's line it left; for the
    migrated run, also what XLA compiled until then."""
    if not run.error:
        return []
    if run.error.startswith(RECOMPILING):
        return _recompiling(run)
    site = run.crash_site or {}
    parts = []
    if site.get("file"):
        parts.append(f"at {site['file']}:{site['line']}")
    if site.get("exception"):
        parts.append(f"({site['exception']})")
    steps = len(run.losses)
    parts.append(f"after {steps} step{'s' if steps != 1 else ''}" if steps else "before its first step")
    compiled = ""
    file, line = site.get("file"), site.get("line")
    if run.compile_causes:
        where_file, where_line, count = _user_line(run.compile_causes)
        compiled = f", after {len(run.compile_causes)} XLA compilations"
        if where_file:
            compiled += f" (the line compiling most: {where_file}:{where_line}, {count} compilations)"
        if not file:
            file, line = where_file, where_line
    if not site and not run.compile_causes:
        return []
    rule = RECOMPILATION_GUIDE if run.compile_causes and not site.get("file") else None
    library = site.get("library")
    if run.role == "migrated" and library and CUDA_LEFT.search(site.get("exception", "")):
        compiled, rule = f"{compiled}: {_library_cuda(library)}", None
    else:
        for pattern, meaning, code in KNOWN_CRASHES if run.role == "migrated" else ():
            if pattern.search(site.get("exception", "")):
                compiled, rule = f"{compiled}: {meaning}", code
                break
    if rule == COMPILE_RULE:  # at the torch.compile line that the fix did not change
        held = [c for c in getattr(run, "compiled", []) if c.get("backend") in GPU_BACKENDS and c.get("file")]
        if held:
            file, line = held[0]["file"], held[0]["line"]
            compiled += f" (torch.compile at {file}:{line})"
    return [
        Finding("crash", f"the {run.role} run crashed {' '.join(parts)}{compiled}", file=file, line=line, rule=rule)
    ]


# Libraries that hard-coded CUDA in a release users still train with, and the release that
# stopped: (package, file inside site-packages) -> what to do.
LIBRARY_CUDA_FIXES = {
    ("timm", "timm/data/mixup.py"): (
        "timm's Mixup made its targets with device='cuda' until timm 0.5.4, which passes the input's device "
        "(huggingface/pytorch-image-models pull request #913): upgrade timm"
    ),
}


def _library_cuda(library: dict) -> str:
    """A migrated run that failed on CUDA inside an installed library: the library's, named with
    its file, line and version, and the release that fixed it where one did."""
    version = f" {library['version']}" if library.get("version") else ""
    where = f"{library['path']}:{library['line']}"
    fix = LIBRARY_CUDA_FIXES.get((library["name"], library["path"]))
    return (
        f"CUDA hard-coded in the library {library['name']}{version} ({where}, in {library['function']}), which "
        "xla-migrate does not rewrite: your code migrated, the library still asks for a GPU"
        + (f"; {fix}" if fix else "; pass it the device where it takes one, or use a release that does not")
    )
