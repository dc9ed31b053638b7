"""Example jobs shipped with statgrid (the demo job among them)."""
from pathlib import Path

EXAMPLES_DIR = Path(__file__).parent
