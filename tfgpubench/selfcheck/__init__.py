"""Measure the measurement: fidelity, noise, sensitivity and cost of the suite, side by side.

One module per part (fidelity, noise, sensitivity, cost), each printing its
figures next to their targets; stats holds the pure numbers, asvruns the
scratch asv setup the last three share, sensitivity_truth the bare-clock
workers sensitivity compares with. The command is commands/selfcheck.py.


fidelity     the suite's per-op time for each cpu eager case, run in this process through
             asv_runner, against a bare perf_counter loop of the same call (target 1.00 +- 0.05);
             the 2x2 float32 case against TensorFlow's own eager microbenchmark method
noise        two full default runs of the same stack compared with `asv compare --factor 1.1`
             (target: nothing flagged), and the distribution of each case's IQR / median
sensitivity  the large cpu Multiply cases rerun with TF_NUM_INTRAOP_THREADS=1: every case whose
             bare-clock time changed by more than the factor must be flagged, nothing else
cost         wall time of the full default run (target <= 5 min on 2 cores) and the share
             spent starting processes and importing TensorFlow

The asv runs go to a temporary directory (own config copy, git repo, results, HOME) and
use this interpreter's TensorFlow: the project's results/ and .stacks are never touched.
"""
