"""README.md's Python examples run as written, and every ``# == expr`` claim in them holds.

The front page's examples are what a new user copies first: each ```python block is executed in
order in one namespace, then each line of the form ``expression  # == expected`` is evaluated
again and compared with ``expected`` (same type, shape, dtype and values).
"""
import pathlib
import re

import numpy as np
import torch

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
CLAIM = re.compile(r"^(?P<lhs>[^#]+?)\s+# == (?P<rhs>.+)$")


def _same(got, want):
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and got.dtype == want.dtype and torch.equal(got, want)
    return (type(got) is type(want) and getattr(got, "dtype", None) == getattr(want, "dtype", None)
            and np.array_equal(got, want))


def test_readme_python_examples_run_and_their_claims_hold():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2, "README.md has no Python examples"
    namespace = {}
    claims = 0
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own code
        for line in block.splitlines():
            m = CLAIM.match(line)
            if m and "=" not in m["lhs"].split("(")[0]:  # an expression, not an assignment
                got, want = eval(m["lhs"], namespace), eval(m["rhs"], namespace)  # noqa: S307
                assert _same(got, want), f"README.md: {line.strip()!r}: got {got!r}, expected {want!r}"
                claims += 1
    assert claims >= 2, f"README.md's examples make {claims} checked claims"
