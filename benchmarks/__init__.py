import os

# TensorFlow's C++ start-up notices would bury asv's own output; errors still show.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# By default TensorFlow maps nearly all of an NVIDIA GPU's memory at its first GPU
# op; allocating on demand instead keeps nvidia-smi's free memory true for the
# memory guard (checks.skip_reason). Set before TensorFlow is imported.
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
# JAX reserves 75% of a GPU's memory when its GPU backend starts, in every benchmark
# process; allocating on demand instead keeps the start light and nvidia-smi's free
# memory (the memory guard) true, as for TensorFlow above. Read when the backend starts.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
