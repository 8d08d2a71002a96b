"""Settings fixed at process start: Keras 3 runs on its TensorFlow backend;
hypothesis runs the small, derandomized "ci" profile unless
HYPOTHESIS_PROFILE names another ("long")."""

import os

from hypothesis import settings

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

settings.register_profile("ci", max_examples=25, deadline=None,
                          derandomize=True)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
