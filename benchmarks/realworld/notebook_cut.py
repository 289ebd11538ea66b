"""A script cut into a notebook, as run.py checks that notebooks migrate: a code cell for each
top-level statement, a markdown cell and a `%matplotlib inline` cell between every two."""

from __future__ import annotations

import ast


def script_to_notebook(src: str) -> dict:
    """A notebook of a script: a code cell for each top-level statement (with the comments above
    it), a markdown cell and a `%matplotlib inline` cell between every two."""
    lines = src.splitlines(keepends=True)
    tree = ast.parse(src)
    starts = []
    prev_end = 0
    for node in tree.body:  # a cell from the end of the statement before: comments go with theirs
        starts.append((prev_end, node.end_lineno))
        prev_end = node.end_lineno
    cells = []

    def code(text):
        return {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": text.splitlines(keepends=True),
        }

    for i, (a, b) in enumerate(starts):
        text = "".join(lines[a:b]).strip("\n")
        if i:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": [f"### Part {i}\n"]})
            cells.append(code("%matplotlib inline"))
        cells.append(code(text))
    tail = "".join(lines[prev_end:]).strip("\n")
    if tail:
        cells.append(code(tail))
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
