"""The lab's answers (issue 29): what a grid and its storage are (inventory), what to tune (rules kept as data,
each citing its source), and how big to build (sizing and a what-if model of another grid shape)."""
