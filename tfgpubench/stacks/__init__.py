"""The table of stacks (stacks.toml: TensorFlow releases, and the comparators PyTorch,
JAX and numpy) and the git repository asv runs along.

table: load and validate the table; selection: which stacks run here;
requirements: what each stack needs from a machine (Python, macOS, CUDA, cuDNN);
repo: generate .stacks/ (a branch per section); install_stack: asv's install_command;
ledger: results safe across interrupted runs, and the versions each one measured;
machine: what asv records about this machine, and whether results are this machine's.
"""
