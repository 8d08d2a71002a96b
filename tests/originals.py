"""Original libraries as ground truth where they no longer install with
their dependencies beside TensorFlow 2.21 (TF Addons 0.23, TF Model Garden
2.20, TF Recommenders 0.7.7): README's test command installs them without
those into `DIRECTORY` (tests/originals.txt), and a test runs them in a
process of its own (`run`, with tf_keras as Keras, as Hugging Face's TF code
needs too), where `import_tensorflow_addons` imports TFA as it ran on
TensorFlow 2.15: `tf.keras` is tf_keras, and the one Keras 2 module TFA
reads, `keras.src.engine`, is tf_keras's."""

import json
import os
import pathlib
import subprocess
import sys

DIRECTORY = pathlib.Path(sys.prefix) / "originals"
REQUIREMENTS = pathlib.Path(__file__).with_name("originals.txt")
PACKAGES = ("tensorflow_addons", "official", "tensorflow_recommenders")
INSTALL = (f"{sys.executable} -m pip install --no-deps "
           f"--python-version 3.11 --target {DIRECTORY} -r {REQUIREMENTS}")


def run(script, *arguments, timeout=900):
  """Runs tests/scripts/`script` with the originals importable and returns
  the JSON it prints."""
  if not all((DIRECTORY / package).is_dir() for package in PACKAGES):
    raise AssertionError(
        f"The original libraries the tests compare with are not installed "
        f"in {DIRECTORY}: run {INSTALL} (README's test command does).")
  tests = pathlib.Path(__file__).parent
  path = [str(DIRECTORY), str(tests),
          *filter(None, [os.environ.get("PYTHONPATH")])]
  result = subprocess.run(
      [sys.executable, str(tests / "scripts" / script), *arguments],
      capture_output=True, text=True, timeout=timeout, check=False,
      env={**os.environ, "PYTHONPATH": os.pathsep.join(path),
           "TF_USE_LEGACY_KERAS": "1"})
  assert result.returncode == 0, result.stderr[-4000:]
  return json.loads(result.stdout)


def import_tensorflow_addons():
  """TF Addons 0.23, imported in a process `run` started."""
  import warnings  # pylint: disable=import-outside-toplevel
  import tf_keras.src.engine  # pylint: disable=import-outside-toplevel
  from tf_keras.src.engine import keras_tensor  # pylint: disable=import-outside-toplevel
  sys.modules.setdefault("keras.src.engine", tf_keras.src.engine)
  sys.modules.setdefault("keras.src.engine.keras_tensor", keras_tensor)
  with warnings.catch_warnings():  # "TensorFlow Addons supports 2.13-2.15".
    warnings.simplefilter("ignore", UserWarning)
    import tensorflow_addons  # pylint: disable=import-outside-toplevel
  return tensorflow_addons
