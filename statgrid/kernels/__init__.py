"""Interactive sessions on the grid: notebook kernels the grid places, as Enterprise Guide sessions on SAS Grid.

- `provisioner.py`: jupyter_client's KernelProvisioner for statgrid's kernel specs (the client's side): starting a
  kernel submits an interactive job (queue `interactive`), waits while it is pending (saying why), and fetches the
  kernel's connection from the master, which gives it to the job's owner alone.
- `launch.py`: the node's side, run as the user by the grid's launcher (`statgrid kernel-run`): one session (WORK,
  UTIL, STIMER) kept while the kernel lives, the kernel bound on the node's grid address with CurveZMQ, its
  connection written 0600 into the job's directory; idle timeout.
- `saskernel.py` (statgrid-sas: cells in the SAS language; log and listing as the cell's output) and
  `pykernel.py` (statgrid-python: IPython with the session as `s`, each cell's steps with their STIMER lines).
- `specs.py`: the kernel specs `statgrid kernels install` writes.
"""
