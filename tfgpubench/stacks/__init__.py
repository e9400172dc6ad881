"""The table of TensorFlow stacks (stacks.toml) and the git repository asv runs along.

table: load and validate the table; selection: which stacks run here;
repo: generate .stacks/; install_stack: asv's install_command;
machine: what asv records about this machine; cli: `tfgpubench stacks`.
"""
