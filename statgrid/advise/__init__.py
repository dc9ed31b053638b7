"""The lab's answers (issue 29): what to tune (rules kept as data, each citing its source, over a bundle's
inventory — monitor/inventory.py — and its measured figures) and how big to build (sizing and a what-if replay
of the measured jobs on a simulated grid of another shape, with the real placement policy)."""
