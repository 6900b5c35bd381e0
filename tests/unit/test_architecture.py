"""The import contracts of pyproject.toml ([tool.importlinter]): `core` never imports `bot`
or matrix-nio, and the decision modules import no I/O library, not even indirectly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold():
    # In a process of its own: import-linter reconfigures logging in the process it runs in.
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
