"""TF Addons 0.23's OptimizerV2 classes through `tf_bridge.port`: each
class itself (TFA imported in this process of its own, by `originals.run`)
and its port run on the same variables and gradients for 100 steps, the
port against the catalog's hand-written one too, and the port of a mutant
(one hyperparameter 1 % off) against the class. Prints, per class, what
failed (None where nothing did) as JSON."""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jaxopt_port.addons  # pylint: disable=wrong-import-position
import tf_bridge  # pylint: disable=wrong-import-position
from tf_bridge import testing  # pylint: disable=wrong-import-position

import originals  # pylint: disable=wrong-import-position

STEPS = 100
tfa = originals.import_tensorflow_addons()

# class, its arguments, the catalog's port, and the argument a mutant moves.
CASES = {
    "RectifiedAdam": (tfa.optimizers.RectifiedAdam,
                      dict(learning_rate=0.01, total_steps=100,
                           warmup_proportion=0.1, weight_decay=0.01),
                      jaxopt_port.addons.rectified_adam, "learning_rate"),
    "Yogi": (tfa.optimizers.Yogi, dict(learning_rate=0.01),
             jaxopt_port.addons.yogi, "learning_rate"),
    "AdaBelief": (tfa.optimizers.AdaBelief, dict(learning_rate=0.01),
                  jaxopt_port.addons.adabelief, "learning_rate"),
    "NovoGrad": (tfa.optimizers.NovoGrad,
                 dict(learning_rate=0.01, weight_decay=0.01,
                      grad_averaging=True),
                 jaxopt_port.addons.novograd, "learning_rate"),
    "LAMB": (tfa.optimizers.LAMB, dict(learning_rate=0.01, weight_decay=0.01),
             jaxopt_port.addons.lamb, "learning_rate"),
    "COCOB": (tfa.optimizers.COCOB, dict(alpha=100.0),
              jaxopt_port.addons.cocob, "alpha"),
    "ConditionalGradient": (tfa.optimizers.ConditionalGradient,
                            dict(learning_rate=0.01, lambda_=0.01),
                            jaxopt_port.addons.conditional_gradient,
                            "learning_rate"),
    "LazyAdam": (tfa.optimizers.LazyAdam, dict(learning_rate=0.01),
                 jaxopt_port.addons.lazy_adam, "learning_rate"),
    "AdamW": (tfa.optimizers.AdamW, dict(weight_decay=0.01,
                                         learning_rate=0.01),
              jaxopt_port.addons.adamw, "weight_decay"),
}


def main():
  initial, gradients = testing.seeded_problem(STEPS, 0, 1.0)
  natives = testing.native_trajectories(
      [cls(**arguments) for cls, arguments, _, _ in CASES.values()], initial,
      gradients)
  transforms = []
  for cls, arguments, catalog, moved in CASES.values():
    mutant = {**arguments, moved: arguments[moved] * 1.01}
    transforms += [tf_bridge.port(cls(**arguments)),
                   tf_bridge.port(cls(**mutant)), catalog(**arguments)]
  runs = testing.transform_trajectories(transforms, initial, gradients)

  def failure(actual, expected, expected_name):
    try:
      testing.compare_trajectories(actual, expected, rtol=1e-5, atol=1e-6,
                                   initial=initial,
                                   expected_name=expected_name)
    except AssertionError as error:
      return str(error)[:400]
    return None

  results = {}
  for index, (name, native) in enumerate(zip(CASES, natives)):
    ported, mutant, catalog = runs[3 * index:3 * index + 3]
    results[name] = {"tfa": failure(ported, native, name),
                     "catalog": failure(ported, catalog, "catalog"),
                     "mutant": failure(mutant, native, name)}
  json.dump(results, sys.stdout)


if __name__ == "__main__":
  main()
