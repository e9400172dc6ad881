"""Measure the measurement: fidelity, noise, sensitivity and cost of the suite, side by side.

One module per part (fidelity, noise, sensitivity, cost), each printing its
figures next to their targets; stats holds the pure numbers, asvruns the
scratch asv setup every part shares, reference and reference_worker the
bare-loop truth the suite is held to, load the passing load noise runs under.
What each part measures: commands/selfcheck.py, the command.
"""
