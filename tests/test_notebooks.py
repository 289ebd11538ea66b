"""Jupyter notebooks: code cells migrated as one program, everything else kept byte for byte.

The notebooks are made here with ``json.dumps`` in the layouts editors write (Jupyter
and nbformat: one-space indent, non-ASCII kept; others two or four spaces, ASCII
escapes), and the written file is compared with the bytes the same ``json.dumps``
gives for the expected notebook: only the changed lines of the changed cells differ.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import stat

import pytest

from conftest import write
from migrate_xla.app.run import migrate_file, options_for
from migrate_xla.sources.discovery import Found, find_sources
from migrate_xla.sources.reading import read_source
from migrate_xla.sources.source import SourceError

FINDING = re.compile(
    r"^(?P<path>.+?):cell (?P<cell>\d+):(?P<line>\d+):(?P<col>\d+): (?P<code>XLA\d{3}) (?P<message>.+)$"
)


_IDS = itertools.count(1)


def code(source: str | list[str], id: str = "", outputs: list | None = None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": 3 if outputs else None,
        "id": id or f"cell-{next(_IDS)}",
        "metadata": {"tags": ["keep"]},
        "outputs": outputs or [],
        "source": source if isinstance(source, list) else _split(source),
    }


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "md", "metadata": {}, "source": _split(text)}


def _split(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def notebook(*cells: dict) -> dict:
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.4"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dump(nb: dict, indent: int | None = 1, ensure_ascii: bool = False, newline: bool = True) -> str:
    return json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if newline else "")


def with_sources(nb: dict, sources: dict[int, str]) -> dict:
    """``nb`` with the source of cell N (1 is the first cell) replaced."""
    nb = copy.deepcopy(nb)
    for number, text in sources.items():
        cell = nb["cells"][number - 1]
        cell["source"] = text if isinstance(cell["source"], str) else _split(text)
    return nb


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["Tesla T4 \u2014 15 GB\n"]}
GPU_NOTEBOOK = notebook(
    markdown("# Training on a GPU \u2014 caf\u00e9\n\nFirst the imports."),
    code("import torch\nimport torch.nn as nn", id="imports"),
    markdown("Then the model."),
    code('device = torch.device("cuda")\nmodel = nn.Linear(4, 2).to(device)', id="model", outputs=[OUTPUT]),
    code("x = torch.ones(2).cuda()  # caf\u00e9", id="data"),
)
MIGRATED_SOURCES = {
    # XLA109: the model cell moves a module, so parameters must survive the move
    2: "import torch\nimport torch.nn as nn\nimport torch_xla\n\ntorch.__future__.set_swap_module_params_on_conversion(True)",
    4: "device = torch_xla.device()\nmodel = nn.Linear(4, 2).to(device)",
    5: "x = torch.ones(2).to(torch_xla.device())  # caf\u00e9",
}


@pytest.mark.parametrize(
    "style",
    [
        {"indent": 1},  # Jupyter, nbformat
        {"indent": 2, "ensure_ascii": True},
        {"indent": 4, "newline": False},
        {"indent": None},  # one line
    ],
    ids=["jupyter", "indent2-ascii", "indent4-no-final-newline", "compact"],
)
def test_only_the_changed_lines_of_code_cells_change_in_the_files_own_layout(tmp_path, cli, style):
    path = write(tmp_path / "train.ipynb", dump(GPU_NOTEBOOK, **style))
    result = cli(str(path))
    assert result.exit_code == 1, result.output
    assert path.read_text(encoding="utf-8") == dump(with_sources(GPU_NOTEBOOK, MIGRATED_SOURCES), **style)


def test_names_resolve_across_cells_and_imports_go_to_the_first_code_cell(tmp_path, cli):
    nb = notebook(
        code("import torch as t"),
        markdown("words"),
        code("def train(model, batch):\n    return model(batch.cuda())"),
        code("t.cuda.synchronize()\ny = t.ones(2)"),
    )
    path = write(tmp_path / "nb.ipynb", dump(nb))
    assert cli(str(path)).exit_code == 1
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[0]["source"]) == "import torch as t\nimport torch_xla"
    assert "".join(cells[2]["source"]) == "def train(model, batch):\n    return model(batch.to(torch_xla.device()))"
    assert "".join(cells[3]["source"]) == "torch_xla.sync(wait=True)\ny = t.ones(2)"  # `t` is torch: known from cell 1


def test_a_notebook_with_nothing_to_change_is_not_rewritten(tmp_path, cli):
    nb = notebook(markdown("# CPU only"), code("import torch\nx = torch.ones(2)\n%time y = x * 2"))
    path = write(tmp_path / "nb.ipynb", dump(nb, indent=2))
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    result = cli(str(path))
    assert result.exit_code == 0, result.output
    assert path.stat().st_mtime_ns == 1_000_000_000


IPYTHON_NOTEBOOK = notebook(
    code("%matplotlib inline\nimport torch"),
    code("!nvidia-smi\nfiles = !ls\ndevice = torch.device('cuda')\nmodel?"),
    code(
        "%%time\nfor step in range(3):\n    loss = model(torch.ones(2).to(device)).sum()\n    loss.backward()\n    opt.step()"
    ),
    code("%%bash\nnvcc --version\necho 'x.cuda()'"),
    code("!pip install \\\n    torch_xla\nif files:\n    %timeit torch.ones(2)\n    y = torch.ones(2).cuda()"),
)


def test_ipython_lines_are_kept_while_the_python_around_them_is_migrated(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb", dump(IPYTHON_NOTEBOOK))
    result = cli("--check", str(path))
    findings = [FINDING.match(line).groupdict() for line in result.stdout.splitlines()]
    assert result.exit_code == 1
    assert [(f["cell"], f["line"], f["col"], f["code"]) for f in findings] == [
        ("2", "1", "1", "XLA809"),  # !nvidia-smi: no NVIDIA driver on a TPU VM
        ("2", "3", "10", "XLA101"),
        ("3", "5", "5", "XLA201"),
        ("5", "5", "9", "XLA103"),
    ]

    assert cli(str(path)).exit_code == 1
    cells = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]
    assert cells[0] == "%matplotlib inline\nimport torch\nimport torch_xla"
    assert cells[1] == (
        "# TODO(xla-migrate): XLA809 `nvidia-smi` queries NVIDIA GPUs through NVML, which a TPU VM does not have: "
        "read memory with `xm.get_memory_info(device)` and compile / execution counts with "
        "`torch_xla.debug.metrics`; see https://docs.pytorch.org/xla/master/learn/troubleshoot.html\n"
        "!nvidia-smi\nfiles = !ls\ndevice = torch_xla.device()\nmodel?"
    )
    assert cells[2].endswith("    opt.step()\n    torch_xla.sync()")
    assert cells[2].startswith("%%time\n")
    assert cells[3] == "%%bash\nnvcc --version\necho 'x.cuda()'"  # not Python: left alone
    assert cells[4] == (
        "!pip install \\\n    torch_xla\nif files:\n    %timeit torch.ones(2)\n"
        "    y = torch.ones(2).to(torch_xla.device())"
    )
    assert cli(str(path)).stdout.count("XLA809") == 1  # a second run changes nothing more
    assert cli("--diff", str(path)).stdout == ""


def test_a_cell_that_is_not_python_is_left_as_it_is_with_a_finding(tmp_path, cli):
    nb = notebook(
        code("import torch"),
        code("x = torch.ones(2).cuda(\ny = 1 +"),
        code("%%writefile train.py\nimport torch\nx = torch.ones(2).cuda()"),
        code("y = torch.ones(2).cuda()"),
    )
    path = write(tmp_path / "nb.ipynb", dump(nb))
    result = cli(str(path))
    assert result.exit_code == 1
    assert f"{path}:cell 2:1:23: XLA001 cell not migrated: '(' was never closed (a syntax error)" in result.stdout
    assert f"{path}:cell 3:1:1: XLA001 cell not migrated: `%%writefile` does not run its body" in result.stdout
    cells = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]
    assert cells[1:3] == [
        "x = torch.ones(2).cuda(\ny = 1 +",
        "%%writefile train.py\nimport torch\nx = torch.ones(2).cuda()",
    ]
    assert cells[3] == "y = torch.ones(2).to(torch_xla.device())"
    # XLA001 is a rule like any other: --ignore turns its finding off, explain knows it
    quiet = cli("--check", "--ignore", "XLA001", str(path))
    assert quiet.exit_code == 0 and "XLA001" not in quiet.stdout
    assert "cell-not-migrated" in cli("explain", "XLA001").stdout


def test_diff_shows_the_changed_cells_code_and_writes_nothing(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb", dump(GPU_NOTEBOOK))
    before = path.read_bytes()
    result = cli("--diff", str(path))
    assert result.exit_code == 1
    assert path.read_bytes() == before
    assert result.stdout == (
        f"--- a/{path}:cell 2\n+++ b/{path}:cell 2\n@@ -1,2 +1,5 @@\n import torch\n import torch.nn as nn\n+import torch_xla\n+\n"
        "+torch.__future__.set_swap_module_params_on_conversion(True)\n"
        f'--- a/{path}:cell 4\n+++ b/{path}:cell 4\n@@ -1,2 +1,2 @@\n-device = torch.device("cuda")\n'
        "+device = torch_xla.device()\n model = nn.Linear(4, 2).to(device)\n"
        f"--- a/{path}:cell 5\n+++ b/{path}:cell 5\n@@ -1 +1 @@\n-x = torch.ones(2).cuda()  # caf\u00e9\n"
        "+x = torch.ones(2).to(torch_xla.device())  # caf\u00e9\n"
    )


def test_findings_left_after_writing_point_into_the_written_cell(tmp_path, cli):
    nb = notebook(code("import torch"), markdown("m"), code("import torch\ns = torch.cuda.Stream()\nx = 1"))
    path = write(tmp_path / "nb.ipynb", dump(nb))
    result = cli("--format", "json", str(path))
    [finding] = json.loads(result.stdout)["files"][0]["diagnostics"]
    assert (finding["code"], finding["cell"], finding["line"], finding["column"]) == ("XLA801", 3, 3, 5)
    cell = json.loads(path.read_text())["cells"][2]["source"]
    assert cell[2] == "s = torch.cuda.Stream()\n"  # line 3 of the written cell (a TODO comment above it)

    sarif = json.loads(cli("--check", "--format", "sarif", str(path)).stdout)
    [result] = sarif["runs"][0]["results"]
    json_line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert path.read_text().splitlines()[json_line - 1].strip() == '"s = torch.cuda.Stream()\\n",'
    assert result["message"]["text"].startswith("cell 3, line 3, column 5: ")
    github = cli("--check", "--format", "github", str(path)).stdout
    assert f"file={path},line={json_line}::{path}:cell 3:3:5: XLA801" in github


def test_output_folder_gets_a_migrated_copy_and_the_notebook_stays(tmp_path, cli):
    src = write(tmp_path / "src" / "nb.ipynb", dump(GPU_NOTEBOOK, indent=2))
    before = src.read_bytes()
    assert cli("-o", str(tmp_path / "out"), str(tmp_path / "src")).exit_code == 1
    assert src.read_bytes() == before
    copy_text = (tmp_path / "out" / "nb.ipynb").read_text()
    assert copy_text == dump(with_sources(GPU_NOTEBOOK, MIGRATED_SOURCES), indent=2)


def test_write_keeps_the_mode_and_a_string_source_stays_a_string(tmp_path, cli):
    nb = notebook(code("import torch"), code("x = torch.ones(2).cuda()\n"))
    nb["cells"][1]["source"] = "x = torch.ones(2).cuda()\n"
    path = write(tmp_path / "nb.ipynb", dump(nb))
    path.chmod(0o640)
    assert cli(str(path)).exit_code == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    expected = with_sources(nb, {1: "import torch\nimport torch_xla", 2: "x = torch.ones(2).to(torch_xla.device())\n"})
    assert path.read_text() == dump(expected)
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]  # no temporary file left


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"cells": [', "not a notebook: invalid JSON at line 1, column 12"),
        ('{"metadata": {}}', "not a notebook: no list of cells"),
        ('{"nbformat": 3, "worksheets": []}', "nbformat 3 notebook: upgrade it with `jupyter nbconvert"),
        (
            '{"cells": [{"cell_type": "code", "source": 3}]}',
            "not a notebook: cell 1 has no cell_type or no source text",
        ),
        (b'{"cells": [], "x": "\xff"}', "not a notebook: cannot decode as UTF-8"),
    ],
)
def test_a_malformed_notebook_is_a_clear_error_and_stays_untouched(tmp_path, cli, text, message):
    path = write(tmp_path / "bad.ipynb", text)
    before = path.read_bytes()
    result = cli(str(path))
    assert result.exit_code == 2
    assert f"bad.ipynb: error: {message}" in result.stderr
    assert path.read_bytes() == before


def test_folders_are_walked_for_notebooks_but_not_jupyter_checkpoints(tmp_path):
    write(tmp_path / "nb.ipynb", dump(GPU_NOTEBOOK))
    write(tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb", dump(GPU_NOTEBOOK))
    write(tmp_path / "train.py", "x = 1\n")
    assert sorted(f.path.name for f in find_sources([tmp_path])) == ["nb.ipynb", "train.py"]


def test_a_notebook_of_another_language_is_left_alone(tmp_path, cli):
    nb = notebook(code("x <- cuda()"))
    nb["metadata"] = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    path = write(tmp_path / "r.ipynb", dump(nb))
    result = cli("--check", str(path))
    assert (result.exit_code, result.stdout) == (0, "")


def test_a_first_cell_that_installs_packages_runs_before_the_added_import(tmp_path, cli):
    nb = notebook(code("!pip install torch_xla"), code("import torch\nx = torch.ones(2).cuda()"))
    path = write(tmp_path / "nb.ipynb", dump(nb))
    assert cli(str(path)).exit_code == 1
    cells = ["".join(cell["source"]) for cell in json.loads(path.read_text())["cells"]]
    assert cells == [
        "!pip install torch_xla",
        "import torch\nimport torch_xla\nx = torch.ones(2).to(torch_xla.device())",
    ]


def test_a_lost_cell_boundary_is_an_error_not_a_broken_notebook(tmp_path):
    path = write(tmp_path / "nb.ipynb", dump(GPU_NOTEBOOK))
    source = read_source(path)
    program = source.text.replace("# <xla-migrate cell 4>\n\n", "")
    with pytest.raises(SourceError, match="could not be told apart"):
        source.encode(program)
    found = migrate_file(Found(path, tmp_path), options_for())
    assert found.error is None and found.changed  # the real migration keeps its boundaries


def test_verify_asks_for_a_script_instead_of_running_a_notebooks_json(tmp_path, cli):
    path = write(tmp_path / "nb.ipynb", dump(GPU_NOTEBOOK))
    result = cli("verify", str(path))
    assert result.exit_code == 2
    assert "jupyter nbconvert --to script" in result.stderr


@pytest.mark.parametrize("indent", [1, 4, None])
def test_code_put_into_an_empty_cell_is_laid_out_like_the_file(tmp_path, indent):
    nb = notebook(code("import torch"), code([]))
    path = write(tmp_path / "nb.ipynb", dump(nb, indent=indent))
    source = read_source(path)
    program = source.text.replace("# <xla-migrate cell 2>\n\n", "# <xla-migrate cell 2>\n\nx = 1\ny = 2\n")
    assert source.encode(program).decode() == dump(with_sources(nb, {2: "x = 1\ny = 2"}), indent=indent)


def test_a_windows_notebook_keeps_its_bom_and_crlf_line_ends(tmp_path, cli):
    text = "\ufeff" + dump(GPU_NOTEBOOK, indent=1).replace("\n", "\r\n")
    path = write(tmp_path / "nb.ipynb", text.encode("utf-8"))
    assert cli(str(path)).exit_code == 1
    expected = "\ufeff" + dump(with_sources(GPU_NOTEBOOK, MIGRATED_SOURCES), indent=1).replace("\n", "\r\n")
    assert path.read_bytes() == expected.encode("utf-8")


@pytest.mark.parametrize(
    "cells, migrated",
    [
        # the repros: a cell that starts with a statement the migration removes
        (["import torch\n", "torch.backends.cudnn.benchmark = True\n"], ["", ""]),  # torch is then unused
        (["import torch\n", "torch.cuda.empty_cache()"], ["", ""]),
        (
            ["import torch\n", "torch.cuda.empty_cache()\nx = torch.ones(2).cuda()"],
            ["import torch\nimport torch_xla\n", "x = torch.ones(2).to(torch_xla.device())"],
        ),
        # a removed last statement of a cell
        (
            ["import torch\n", "x = torch.ones(2).cuda()\ntorch.cuda.empty_cache()", "y = 1"],
            ["import torch\nimport torch_xla\n", "x = torch.ones(2).to(torch_xla.device())", "y = 1"],
        ),
        # a cell emptied entirely, its comment with it; the last cell too
        (
            ["import torch\n", "# speed\ntorch.backends.cudnn.benchmark = True\n", "x = torch.ones(2).cuda()"],
            ["import torch\nimport torch_xla\n", "", "x = torch.ones(2).to(torch_xla.device())"],
        ),
        (
            ["import torch\n", "x = torch.ones(2).cuda()\n", "# free memory\ntorch.cuda.empty_cache()\n"],
            ["import torch\nimport torch_xla\n", "x = torch.ones(2).to(torch_xla.device())\n", ""],
        ),
        (
            ["import torch\n", "x = torch.ones(2).cuda()\n", "pass\ntorch.cuda.empty_cache()\n"],
            ["import torch\nimport torch_xla\n", "x = torch.ones(2).to(torch_xla.device())\n", "pass\n"],
        ),
        # the first cell emptied
        (["import torch\ntorch.backends.cudnn.benchmark = True", "print('ready')"], ["", "print('ready')"]),
    ],
    ids=[
        "cudnn-flag",
        "empty-cache",
        "first-of-two",
        "last-statement",
        "middle-cell",
        "last-cell",
        "user-pass",
        "first-cell",
    ],
)
def test_a_cell_the_migration_empties_in_part_or_whole_stays_a_cell(tmp_path, cli, cells, migrated):
    nb = notebook(*[code(cell) for cell in cells[:1]], markdown("text"), *[code(cell) for cell in cells[1:]])
    path = write(tmp_path / "nb.ipynb", dump(nb))
    result = cli(str(path))
    assert result.exit_code == 1, result.output
    written = json.loads(path.read_text())["cells"]
    assert [cell["id"] for cell in written] == [cell["id"] for cell in nb["cells"]]
    assert ["".join(cell["source"]) for cell in written if cell["cell_type"] == "code"] == migrated
    assert cli("--diff", str(path)).stdout == ""  # and a second run changes nothing
