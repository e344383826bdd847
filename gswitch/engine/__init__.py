"""Execution engines: ``cpu`` (NumPy) and ``gpu`` (CuPy)."""
