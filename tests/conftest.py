"""Settings fixed at process start: Keras 3 runs on its TensorFlow backend."""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
