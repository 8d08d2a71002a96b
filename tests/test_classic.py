"""The classic hand-written optimizers against numpy versions of their formulas."""

import jax
import jaxopt_port
import numpy as np
import optax
import pytest

from tf_bridge import testing

STEPS = 60


def numpy_trajectory(initial, gradients, *, learning_rate, momentum,
                     bias_corrected, decay=0.0):
  """The DESIGN.md formulas, in float64, step by step."""
  params = [p.astype(np.float64) for p in initial]
  moments = [np.zeros_like(p) for p in params]
  trajectory = []
  for step, grads in enumerate(gradients):  # step = OptimizerV2.iterations
    rate = learning_rate / (1.0 + decay * step)
    for index, grad in enumerate(grads):
      moments[index] = momentum * moments[index] + (1 - momentum) * grad
      direction = moments[index]
      if bias_corrected and momentum:
        direction = direction / (1 - momentum ** (step + 1))
      params[index] = params[index] - rate * direction
    trajectory.append([p.copy() for p in params])
  return trajectory


CASES = [
    ("vanilla_sgd", {"learning_rate": 0.1}, 0.0, False),
    ("momentum_sgd", {"learning_rate": 0.1, "momentum": 0.9}, 0.9, False),
    ("momentum_sgd", {}, 0.0, False),
    ("centered_momentum_sgd", {"learning_rate": 0.05, "momentum": 0.9}, 0.9,
     True),
    ("centered_momentum_sgd", {"learning_rate": 0.05, "momentum": 0.0}, 0.0,
     True),
]


@pytest.mark.parametrize("generation", ["keras", "legacy"])
@pytest.mark.parametrize("name,kwargs,momentum,bias_corrected", CASES)
def test_classic_equals_formula(generation, name, kwargs, momentum,
                                bias_corrected):
  module = jaxopt_port.legacy if generation == "legacy" else jaxopt_port
  initial, gradients = testing.seeded_problem(STEPS, seed=3, grad_scale=1.0)
  actual = testing.transform_trajectory(getattr(module, name)(**kwargs),
                                        initial, gradients)
  expected = numpy_trajectory(
      initial, gradients, learning_rate=kwargs.get("learning_rate", 0.01),
      momentum=momentum, bias_corrected=bias_corrected)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,momentum", [("momentum_sgd", 0.8),
                                           ("centered_momentum_sgd", 0.8),
                                           ("vanilla_sgd", None)])
def test_legacy_classic_decay_and_lr_alias(name, momentum):
  """`decay` and `lr` behave as in an OptimizerV2 subclass using _decayed_lr."""
  kwargs = {} if momentum is None else {"momentum": momentum}
  initial, gradients = testing.seeded_problem(STEPS, seed=4, grad_scale=1.0)
  with pytest.warns(DeprecationWarning, match="`lr` argument is deprecated"):
    transform = getattr(jaxopt_port.legacy, name)(lr=0.2, decay=0.05, **kwargs)
  actual = testing.transform_trajectory(transform, initial, gradients)
  expected = numpy_trajectory(
      initial, gradients, learning_rate=0.2, momentum=momentum or 0.0,
      bias_corrected=name.startswith("centered"), decay=0.05)
  testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6)


def test_centered_momentum_first_step_is_the_gradient_step():
  """Bias correction: step 1 moves by lr * g whatever the momentum."""
  params = {"w": jax.numpy.array([1.0, -2.0])}
  grads = {"w": jax.numpy.array([0.5, 4.0])}
  transform = jaxopt_port.centered_momentum_sgd(learning_rate=0.1,
                                                momentum=0.99)
  updates, _ = transform.update(grads, transform.init(params), params)
  np.testing.assert_allclose(updates["w"], [-0.05, -0.4], rtol=1e-5)
  plain = jaxopt_port.momentum_sgd(learning_rate=0.1, momentum=0.99)
  updates, _ = plain.update(grads, plain.init(params), params)
  np.testing.assert_allclose(updates["w"], [-0.0005, -0.004], rtol=1e-4)


def test_zero_momentum_keeps_no_slot():
  state = jaxopt_port.momentum_sgd(momentum=0.0).init({"w": np.ones(2)})
  assert state.slots.momentum is None
  state = jaxopt_port.momentum_sgd(momentum=0.5).init({"w": np.ones(2)})
  assert optax.tree.size(state.slots.momentum) == 2
