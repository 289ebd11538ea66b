"""XLA902: sparse tensors, which the XLA device cannot hold (torch_xla has no SparseXLA kernel):
the sparse matrix of a graph convolution is kept dense and multiplied with ``torch.mm``
(unsafe fix); the sparse APIs with no dense form here are flagged."""

from __future__ import annotations

import libcst as cst

from codemods.runtime_defects.common import DEFECTS_DOC
from migrate_xla.rule.api import (
    EQUAL,
    TORCH,
    UNSAFE,
    Rule,
    call_arg,
    code_of,
    drop_items,
    parse_expr,
    snippet,
    words,
    xla_ops,
)

# What the generated table (migrate_xla/generated/xla_ops.py, from the installed torch_xla) lists
CONSTRUCTORS = frozenset({"torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor"})
LEGACY = frozenset(api for api in xla_ops.APIS if api.startswith("torch.sparse.") and api.endswith("Tensor"))
# torch.cuda.sparse.FloatTensor & co: as torch.sparse's, on the GPU (no CUDA here to trace them)
CUDA_LEGACY = {f"torch.cuda.sparse.{api.rpartition('.')[2]}": api for api in LEGACY}
# the sparse products and sums that compute the same on a dense matrix, and what does
DENSE_FORMS = {"torch.spmm": "mm", "torch.sparse.mm": "mm", "torch.sparse.addmm": "addmm", "torch.sparse.sum": "sum"}
TO_SPARSE = tuple(sorted(api.partition(".")[2] for api in xla_ops.APIS if api.startswith("Tensor.to_sparse")))
# what has no dense form this rule writes: what to do instead
BY_HAND = {
    "torch.smm": "with the matrix dense, `torch.mm(a, b)` computes the product (dense, where smm's is sparse)",
    "torch.hspmm": "with the matrix dense, `torch.mm(a, b)` computes the product (dense, where hspmm's is hybrid)",
    "torch.sspaddmm": "with the matrices dense, `torch.addmm(input, mat1, mat2)` computes it (dense)",
    "torch.sparse.softmax": (
        "a sparse softmax leaves out the entries not stored; on a dense matrix whose zeros are those entries "
        "`torch.softmax(x.masked_fill(x == 0, float('-inf')), dim)` computes it (a row with no entry gives NaN)"
    ),
    "torch.sparse.log_softmax": (
        "a sparse log-softmax leaves out the entries not stored; on a dense matrix whose zeros are those entries "
        "`torch.log_softmax(x.masked_fill(x == 0, float('-inf')), dim)` computes it (a row with no entry gives NaN)"
    ),
    "Tensor._indices": "read the indices on the CPU before the move, or from the dense matrix (`x.nonzero().t()`)",
    "Tensor._values": "read the values on the CPU before the move, or from the dense matrix (`x[x != 0]`)",
    "Tensor._nnz": "count on the CPU before the move, or on the dense matrix (`(x != 0).sum()`)",
}
TORCH_FUNCTIONS = sorted(
    api for api in (*CONSTRUCTORS, *DENSE_FORMS, *BY_HAND) if api.count(".") == 1 and api[0] == "t"
)
FLAGGED_METHODS = frozenset(api.partition(".")[2] for api in BY_HAND if api.startswith("Tensor."))
COALESCE = "coalesce"

CANNOT_HOLD = (
    f"the XLA device cannot hold a sparse tensor (torch_xla {xla_ops.TORCH_XLA_VERSION} has no SparseXLA kernel)"
)
DENSE_COST = "dense, it takes n x n entries of memory, not its nonzeros"


class SparseTensors(Rule):
    """Sparse tensors (``torch.sparse_coo_tensor``, ``torch.sparse.FloatTensor``,
    ``x.to_sparse()``, ``torch.spmm``, ``torch.sparse.mm``) cannot be on the XLA device.

    The guide's "Unsupported Operations" says that an operation with no XLA lowering falls
    back to the CPU. Not a sparse one: a sparse tensor on the device dispatches to the
    SparseXLA key, for which torch_xla 2.9 registers no kernel and no fallback
    (``migrate_xla/generated/xla_ops.py``, generated from the installed torch_xla, lists what each API
    needs; pytorch/xla#6853: "we didn't implement the corresponding sparse kernels"). A
    graph convolution that keeps its normalized adjacency as a sparse matrix and multiplies
    it with ``torch.spmm`` runs on the GPU and dies on XLA at ``adj.to(device)``
    (NotImplementedError: ... 'SparseXLA' backend; measured on CPU PJRT).

    The unsafe fix keeps the matrix dense, which is what it computes with: a constructor
    gets ``.to_dense()`` (``torch.sparse_coo_tensor(i, v, size).to_dense()``; the legacy
    ``torch.sparse.FloatTensor(i, v, size)`` and its kind become that too, a ``device=`` goes
    to a ``.to(device)`` after it), ``x.to_sparse()`` is ``x``, ``x.coalesce()`` is ``x``
    (``adj = adj.to_sparse()`` goes), and the products and sums become their dense forms,
    which XLA lowers: ``torch.spmm(a, b)`` and ``torch.sparse.mm(a, b)`` are ``torch.mm(a,
    b)``, ``torch.sparse.addmm`` is ``torch.addmm``, ``torch.sparse.sum`` is ``torch.sum``.
    Unsafe, and marked in the code when held back (the run crashes otherwise): the values are
    the same, but memory grows from the nonzeros to every entry (n x n: 400 MB at 10,000
    nodes in float32) and a product with the matrix costs n x n x f operations where the
    sparse one costs nnz x f: right for graphs of thousands of nodes, not for millions
    (keep those on the CPU, or gather and scatter over an edge list). The constructor's
    indices and values must be on the CPU, as they are where the matrix is built once
    before training. What has no dense form here is flagged with one
    (``torch.sparse.softmax``, ``torch.smm``, ``x._values()``, ``torch.cuda.sparse.FloatTensor``).
    A constructor whose result is made dense at once (``torch.sparse_coo_tensor(...).to_dense()``)
    is left as it is.

    PyTorch/XLA only: TorchTPU's sparse support cannot be checked here.
    """

    CODE = "XLA902"
    NAME = "sparse-tensors"
    SUMMARY = "sparse tensors, which the XLA device cannot hold, become dense (torch.spmm -> torch.mm)"
    FIX = UNSAFE
    SEVERITY = "warning"
    MARK_HELD_BACK = True  # held back, the run raises NotImplementedError at the sparse tensor's move
    # torch.sparse.mm, .sum, FloatTensor spell "sparse" however they are imported (`mm` and
    # `sum` alone would wake the rule in most files); torch's own functions their names
    TRIGGERS = (words("sparse", *(api[len("torch.") :] for api in TORCH_FUNCTIONS), *TO_SPARSE),)
    # the methods it flags or drops by their name alone, wherever they are (a slice keeps their units)
    CONTEXT = (words(COALESCE, *sorted(FLAGGED_METHODS)),)
    RUNTIMES = ("torch-xla",)
    BEFORE = "adj = torch.sparse_coo_tensor(index, weight, (n, n))\nh = torch.spmm(adj, x @ w)\n"
    AFTER = "adj = torch.sparse_coo_tensor(index, weight, (n, n)).to_dense()\nh = torch.mm(adj, x @ w)\n"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.dense_already: set[int] = set()  # constructors (and their coalesce()) made dense at once
        self.converted: set[int] = set()  # the constructors made dense by the fix (or that would be)

    def visit_Call(self, node: cst.Call) -> None:
        if _method(node) != "to_dense":
            return
        chain, receiver = [], node.func.value
        while _method(receiver) == COALESCE and not receiver.args:
            chain.append(receiver)
            receiver = receiver.func.value
        if isinstance(receiver, cst.Call) and self._constructor(receiver) is not None:
            self.dense_already |= {id(receiver), *map(id, chain)}

    def _constructor(self, call: cst.Call) -> str | None:
        name = self.qualname(call.func)
        return name if name in CONSTRUCTORS or name in LEGACY or name in CUDA_LEGACY else None

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self.dense_already:
            return updated
        name = self.qualname(original.func)
        if name in CONSTRUCTORS or name in LEGACY:
            return self._constructed(original, updated, name)
        if name in CUDA_LEGACY:
            self.flag(
                original,
                f"`{snippet(original)}` builds a sparse matrix on the GPU; {CANNOT_HOLD}: build it dense, on "
                "the CPU (`torch.sparse_coo_tensor(i, v, size).to_dense()`, then move it) or where `i` and `v` are "
                f"(`torch.zeros(size, device=v.device).index_put((i[0], i[1]), v, accumulate=True)`); see {DEFECTS_DOC}",
            )
            return updated
        if name in DENSE_FORMS:
            return self._dense_form(original, updated, name)
        if name in BY_HAND:
            self.flag(original, f"`{snippet(original)}`: {CANNOT_HOLD}; {BY_HAND[name]}; see {DEFECTS_DOC}")
            return updated
        method = _method(original) if name is None else None
        if method == COALESCE and not original.args and id(original.func.value) in self.converted:
            return updated.func.value if self.fixes(original) else updated  # the constructor's finding says it
        if method in TO_SPARSE or (method == COALESCE and not original.args):
            what = "makes a sparse tensor" if method in TO_SPARSE else "is a sparse tensor's method (by its name)"
            return self.replace(
                original,
                updated,
                updated.func.value,
                f"`{snippet(original)}` {what}; {CANNOT_HOLD}: the fix keeps "
                f"`{snippet(original.func.value, 40)}` as it is ({DENSE_COST}); see {DEFECTS_DOC}",
            )
        if method in FLAGGED_METHODS:
            self.flag(
                original,
                f"`{snippet(original)}` reads a sparse tensor (a guess, by the method's name); {CANNOT_HOLD}; "
                f"{BY_HAND[f'Tensor.{method}']}; see {DEFECTS_DOC}",
            )
        return updated

    def _constructed(self, original: cst.Call, updated: cst.Call, name: str):
        positional = [a for a in original.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value for a in original.args if a.keyword is not None}
        requires_grad = call_arg(original, None, "requires_grad")
        values_given = len(positional) >= 2 or {"indices", "values"} <= keywords
        if (
            any(a.star for a in original.args)
            or not values_given
            or (requires_grad is not None and code_of(requires_grad.value) != "False")
            or (name in LEGACY and positional and isinstance(positional[0].value, cst.Integer))
            or (name in LEGACY and len(positional) == 2 and "size" not in keywords)  # (i, v) or a size (n, m)?
        ):
            self.flag(
                original,
                f"`{snippet(original)}` makes a sparse tensor; {CANNOT_HOLD}: build it dense "
                f"(`torch.sparse_coo_tensor(i, v, size).to_dense()` on the CPU, or `torch.zeros(size)`); see {DEFECTS_DOC}",
            )
            return updated
        self.converted.add(id(original))
        device = call_arg(updated, None, "device")  # as the other rules left it ("cuda" -> "xla")
        call = updated.with_changes(
            args=drop_items(updated.args, lambda a: a.keyword is not None and a.keyword.value == "device")
        )
        imports, drops = (), ()
        if name in LEGACY:
            local = self.ctx.binds("torch")
            call = call.with_changes(func=parse_expr(f"{local or 'torch'}.sparse_coo_tensor"))
            imports, drops = (() if local else (TORCH,)), tuple(self.ctx.import_behind(original.func))
        dense: cst.BaseExpression = cst.Call(cst.Attribute(call, cst.Name("to_dense")))
        moved = ""
        if device is not None:
            dense = cst.Call(cst.Attribute(dense, cst.Name("to")), [cst.Arg(device.value)])
            moved = f", then moved to `{code_of(device.value)}`"
        return self.replace(
            original,
            updated,
            dense,
            f"`{snippet(original)}` makes a sparse matrix; {CANNOT_HOLD}: the fix makes it dense (`.to_dense()`, "
            f"where its indices and values are, which must be the CPU{moved}; {DENSE_COST}); see {DEFECTS_DOC}",
            imports=imports,
            drop_if_unused=drops,
        )

    def _dense_form(self, original: cst.Call, updated: cst.Call, name: str):
        form = DENSE_FORMS[name]
        positional = [a for a in updated.args if a.keyword is None and not a.star]
        if any(a.star for a in original.args) or (form == "mm" and (len(original.args) != 2 or len(positional) != 2)):
            self.flag(
                original,
                f"`{snippet(original)}`: {CANNOT_HOLD}; a `reduce` of torch.sparse.mm reduces over the stored "
                f'entries only: write it on the dense matrix by hand (reduce="sum" is `torch.mm(a, b)`); see {DEFECTS_DOC}',
            )
            return updated
        args = list(updated.args)
        if form == "sum" and len(positional) == 3:  # sparse.sum(input, dim, dtype): torch.sum's third is keepdim
            third = args.index(positional[2])
            args[third] = positional[2].with_changes(keyword=cst.Name("dtype"), equal=EQUAL)
        local = self.ctx.binds("torch")
        return self.replace(
            original,
            updated,
            updated.with_changes(func=parse_expr(f"{local or 'torch'}.{form}"), args=args),
            f"`{snippet(original)}` computes with a sparse matrix; {CANNOT_HOLD}: with the matrix dense "
            f"(XLA902's fix where it is made), `torch.{form}` computes the same, on the device; see {DEFECTS_DOC}",
            imports=() if local else (TORCH,),
            drop_if_unused=self.ctx.import_behind(original.func),
        )

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        # `adj = adj.to_sparse()` would be left as `adj = adj`: the statement goes (its finding stays)
        value = original.value
        if (
            len(original.targets) == 1
            and (_method(value) in TO_SPARSE or (_method(value) == COALESCE and not value.args))
            and self.qualname(value.func) is None
            and code_of(value.func.value) == code_of(original.targets[0].target)
            and id(value) not in self.dense_already
            and self.fixes(value)
        ):
            return cst.RemoveFromParent()
        return updated


def _method(node: cst.CSTNode) -> str | None:
    """``name`` for a call ``x.name(...)``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value
    return None
