"""NiceEval: write evals in Python, run them, read honest results back from SQLite."""

__version__ = "0.1.0"
