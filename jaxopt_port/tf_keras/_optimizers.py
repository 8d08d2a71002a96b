"""tf_keras's 2.11+ optimizers whose numbers or defaults are not Keras 3's
ports' (see the package's docstring)."""

from __future__ import annotations

from jaxopt_port import _checks
from jaxopt_port._adam import adam_update_step, adamw as keras3_adamw
from jaxopt_port import _row_sparse
from jaxopt_port._base import UpdateStep
from jaxopt_port.tf_keras._base import with_tf_keras_base_arguments
from jaxopt_port._lion import lion_update_step
from jaxopt_port._sgd import sgd_update_step


@with_tf_keras_base_arguments(learning_rate=0.001,
                              sparse_rows=_row_sparse.DENSE)
def adam(beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
         adaptive_epsilon: bool = False, amsgrad: bool = False
         ) -> UpdateStep:
  """Adam, as `tf_keras.optimizers.Adam`: `jaxopt_port.adam`, and with
  `adaptive_epsilon` the epsilon of the paper's Algorithm 1.

  With `t` the 1-based step::

    alpha = learning_rate * sqrt(1 - beta_2**t) / (1 - beta_1**t)
    epsilon_hat = epsilon * sqrt(1 - beta_2**t)   (adaptive_epsilon)
                  epsilon                         (otherwise)
    m = m + (g - m) * (1 - beta_1)
    v = v + (g**2 - v) * (1 - beta_2)
    p = p - m * alpha / (sqrt(v) + epsilon_hat)

  Args:
    learning_rate: A float or a schedule. Defaults to 0.001.
    beta_1, beta_2, epsilon, amsgrad: As in `jaxopt_port.adam`.
    adaptive_epsilon: Scale epsilon by `sqrt(1 - beta_2**t)`.

  Reference: Kingma and Ba, 2014, "Adam: A Method for Stochastic
  Optimization".
  """
  _checks.check_moment_arguments(beta_1, beta_2, epsilon)
  return adam_update_step(beta_1, beta_2, epsilon, amsgrad,
                          adaptive_epsilon=bool(adaptive_epsilon))


@with_tf_keras_base_arguments(learning_rate=0.001,
                              sparse_rows=_row_sparse.DENSE)
def adamw(weight_decay: float = 0.004, beta_1: float = 0.9,
          beta_2: float = 0.999, epsilon: float = 1e-7,
          amsgrad: bool = False) -> UpdateStep:
  """AdamW, as `tf_keras.optimizers.AdamW`: `jaxopt_port.adamw` (Keras 3's
  numbers; see its arguments there), with tf_keras's words for a missing
  `weight_decay`.

  ::

    p = p - p * weight_decay * learning_rate
    p = adam(p)

  Reference: Loshchilov and Hutter, 2019, "Decoupled Weight Decay
  Regularization".
  """
  if weight_decay is None:
    raise ValueError("Missing value of `weight_decay` which is required and"
                     " must be a float value.")
  return keras3_adamw.make_update_step(
      weight_decay=weight_decay, beta_1=beta_1, beta_2=beta_2,
      epsilon=epsilon, amsgrad=amsgrad)


@with_tf_keras_base_arguments(learning_rate=0.0001,
                              sparse_rows=_row_sparse.DENSE)
def lion(beta_1: float = 0.9, beta_2: float = 0.99) -> UpdateStep:
  """Lion, as `tf_keras.optimizers.Lion`: `jaxopt_port.lion`, with
  tf_keras's default learning rate (1e-4) and its words for a `beta_1`
  outside (0, 1].

  ::

    p = p - learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
    m = beta_2 * m + (1 - beta_2) * g

  Reference: Chen et al., 2023, "Symbolic Discovery of Optimization
  Algorithms".
  """
  _checks.check_range(
      "beta_1", beta_1, 0.0, 1.0, low_open=True,
      message="`beta_1`={value} must be between ]0, 1]. Otherwise, the "
      "optimizer degenerates to SignSGD.")
  _checks.check_range("beta_2", beta_2, 0.0, 1.0)
  return lion_update_step(beta_1, beta_2)


@with_tf_keras_base_arguments(learning_rate=0.01,
                              sparse_rows=_row_sparse.DENSE)
def sgd(momentum: float = 0.0, nesterov: bool = False) -> UpdateStep:
  """Gradient descent with momentum, as `tf_keras.optimizers.SGD`:
  `jaxopt_port.sgd`'s numbers, its momentum slot kept at momentum 0 too
  (where the step is `m = -learning_rate * g; p = p + m`), as tf_keras
  keeps it, and a sparse gradient's step on every row (tf_keras decays
  every row's momentum).

  ::

    m = momentum * m - learning_rate * g
    p = p + momentum * m - learning_rate * g   (nesterov)
    p = p + m                                  (otherwise)

  Reference: Sutskever et al., 2013, "On the importance of initialization
  and momentum in deep learning".
  """
  _checks.check_range("momentum", momentum, 0.0, 1.0,
                      message="`momentum` must be between [0, 1].")
  return sgd_update_step(momentum, nesterov, keeps_momentum=True)
