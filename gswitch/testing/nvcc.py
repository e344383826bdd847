"""Offline compilation of generated CUDA with the toolkit's ``nvcc`` (no GPU needed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["find_nvcc", "compile_source"]


def find_nvcc() -> str | None:
    """Path of ``nvcc``: ``$CUDA_HOME/bin``, ``PATH``, then ``/usr/local/cuda/bin``."""
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if root and (Path(root) / "bin" / "nvcc").exists():
            return str(Path(root) / "bin" / "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.exists() else None


def compile_source(source: str, arch: str = "sm_90", nvcc: str | None = None,
                   timeout: float = 300.0) -> tuple[bool, str]:
    """Compile ``source`` to a cubin for ``arch``; returns ``(ok, compiler output)``."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        return False, "nvcc not found (set CUDA_HOME or put nvcc on PATH)"
    with tempfile.TemporaryDirectory(prefix="gswitch-nvcc-") as tmp:
        src = Path(tmp) / "module.cu"
        src.write_text(source)
        proc = subprocess.run(
            [nvcc, "-std=c++17", f"-arch={arch}", "-cubin", "-o", str(Path(tmp) / "m.cubin"),
             str(src)],
            capture_output=True, text=True, timeout=timeout,
        )
        return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
