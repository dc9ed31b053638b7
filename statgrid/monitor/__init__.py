"""Node monitor: samplers over /proc (one private parser module), declared metrics, Parquet store."""
from statgrid.monitor.metrics import METRICS, Metric
from statgrid.monitor.sampler import Sampler

__all__ = ["METRICS", "Metric", "Sampler"]
