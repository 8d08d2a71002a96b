"""TF Recommenders' optimizers (`tensorflow_recommenders.experimental.
optimizers`): `clippy_adagrad` takes `ClippyAdagrad`'s arguments with their
names and defaults (plus Keras's base arguments) and computes its numbers.
"""

from jaxopt_port.tfrs._clippy_adagrad import clippy_adagrad

__all__ = ["clippy_adagrad"]
