import os

# TensorFlow's C++ start-up notices would bury asv's own output; errors still show.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
