"""No lock-in: a bridged optimizer's native twin, and a model saved with it.

A file of a model compiled with a bridged class names that class, which only
loads where this project is installed. `native_optimizer(model)` swaps in
the native class with the same config and state for the time of a save, so
the file loads anywhere Keras (or tf_keras) does; where the project is
installed, `load_model` of a file saved as usual still gives the bridged
class back.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from tf_bridge import catalog


def native_twin(optimizer: Any) -> Any:
  """The native optimizer `optimizer` (a bridged Keras 3 or tf_keras legacy
  class with a native twin) stands for: made from its config and, once
  built, built on the same variables with its variables' values (native's
  variables are the bridged class's, in the same order).

  Raises ValueError for a class without a native twin (a TF1 or TF Addons
  class, one made from your own factory, one made with
  `skip_nonfinite=True`), naming what is missing.
  """
  from tf_bridge._keras3 import Keras3Optimizer  # pylint: disable=import-outside-toplevel
  name = type(optimizer).__name__
  declaration = getattr(type(optimizer), "declaration", None)
  generation = (catalog.KERAS if isinstance(optimizer, Keras3Optimizer)
                else catalog.LEGACY)
  if (declaration is None or not declaration.has_native
      or declaration.generation != generation):
    raise ValueError(
        f"{name} has no native twin (only the bridged classes of "
        "keras.optimizers and tf_keras.optimizers.legacy have one): it "
        "cannot be saved as a native optimizer.")
  if optimizer._skip_nonfinite:  # pylint: disable=protected-access
    raise ValueError(f"{name}(skip_nonfinite=True) has no native twin: "
                     "native optimizers do not skip non-finite steps.")
  twin = declaration.native_class().from_config(optimizer.get_config())
  variables = optimizer._built_variables()  # pylint: disable=protected-access
  if variables:
    if generation == catalog.KERAS:
      twin.build(variables)
      mine, theirs = optimizer.variables, twin.variables
    else:
      twin._create_all_weights(variables)  # pylint: disable=protected-access
      mine, theirs = optimizer.variables(), twin.variables()
    if [tuple(v.shape) for v in mine] != [tuple(v.shape) for v in theirs]:
      raise ValueError(
          f"{name}'s variables ({len(mine)}) do not lay out as native's "
          f"({len(theirs)}): it cannot be saved as a native optimizer.")
    for target, value in zip(theirs, mine):
      target.assign(value)
  return twin


@contextlib.contextmanager
def native_optimizer(model: Any) -> Iterator[Any]:
  """Within it, `model` (Keras 3 or tf_keras, compiled with a bridged
  optimizer) holds the optimizer's `native_twin`, and saves as compiled
  with it: `model.save` writes a file that loads where this project is not
  installed, the native class taking over with the same state. The bridged
  optimizer is back on exit (the twin's later steps are not its).

      with tf_bridge.native_optimizer(model):
        model.save("model.keras")
  """
  bridged = model.optimizer
  twin = native_twin(bridged)
  compile_config = getattr(model, "_compile_config", None)
  saved = None if compile_config is None else dict(compile_config.config)
  model.optimizer = twin
  if saved is not None:
    compile_config.config["optimizer"] = twin
  try:
    yield twin
  finally:
    model.optimizer = bridged
    if saved is not None:
      compile_config.config.clear()
      compile_config.config.update(saved)
