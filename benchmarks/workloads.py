"""The benchmarks' workloads: tree shapes, the bytes a step moves, and the
optimizer steps each implementation runs on them (JAX, TensorFlow, a
`model.fit` CNN)."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np
import optax

import jaxopt_port


LEARNING_RATE = 1e-3


WEIGHT_DECAY = 0.004


# Slots per parameter: a step reads params, grads and the slots and writes
# params and slots, (3 + 2 * slots) passes over the params' bytes.
SLOTS = {"sgd-momentum": 1, "adam": 2, "adamw": 2, "rmsprop": 1,
         "adagrad": 1, "lion": 1, "lamb": 2}


ALGORITHMS = list(SLOTS)


JAX_IMPLEMENTATIONS = ["roofline", "optax", "jaxopt_port", "jaxopt_port.packed"]


# Each native optimizer in every configuration its users get:
# `apply_gradients` in a `tf.function` as written, Keras 3's also under
# `jit_compile=True` (what Keras 3's `model.fit` compiles by default where
# TensorFlow sees a GPU; on a CPU-only machine its "auto" is False);
# tf_keras runs without XLA by default. The bridge's update is one XLA call
# whatever the function around it.
NATIVE_TF_IMPLEMENTATIONS = ["keras3", "keras3.xla", "tf_keras.legacy"]


TF_IMPLEMENTATIONS = NATIVE_TF_IMPLEMENTATIONS + ["tf_bridge",
                                                  "tf_bridge.legacy"]


# `model.fit` configurations: (implementation, `jit_compile` or None for
# the host's default). Keras 3's default ("auto") compiles the train step
# with XLA where TensorFlow sees a GPU and not on a CPU-only machine
# (`Trainer._resolve_auto_jit_compile`); tf_keras's does not. Each result
# records what the default resolved to.
FIT_CONFIGURATIONS = {
    "keras3": ("keras3", None),
    "keras3 jit_compile=True": ("keras3", True),
    "keras3 jit_compile=False": ("keras3", False),
    "tf_keras.legacy": ("tf_keras.legacy", None),
    "tf_bridge": ("tf_bridge", None),
    "tf_bridge jit_compile=True": ("tf_bridge", True),
    "tf_bridge jit_compile=False": ("tf_bridge", False),
    "tf_bridge.legacy": ("tf_bridge.legacy", None),
}


def resnet50_shapes() -> list[tuple[int, ...]]:
  """Trainable parameter shapes of keras.applications.ResNet50 (1000
  classes): convolutions with biases, batch-norm gamma and beta."""
  shapes = []

  def conv(kernel, inputs, filters):
    shapes.extend([(kernel, kernel, inputs, filters), (filters,)])
    shapes.extend([(filters,), (filters,)])  # Its batch norm.

  conv(7, 3, 64)
  inputs = 64
  for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
    for block in range(blocks):
      if block == 0:
        conv(1, inputs, 4 * width)  # Projection shortcut.
      conv(1, inputs, width)
      conv(3, width, width)
      conv(1, width, 4 * width)
      inputs = 4 * width
  shapes.extend([(2048, 1000), (1000,)])
  return shapes


def transformer_shapes(layers: int = 12, d_model: int = 768,
                       vocabulary: int = 50257, context: int = 1024
                       ) -> list[tuple[int, ...]]:
  """A GPT-2-small-like decoder: token and position embeddings, per layer
  layer norms, fused QKV, output projection and a 4x MLP."""
  shapes = [(vocabulary, d_model), (context, d_model)]
  for _ in range(layers):
    shapes += [(d_model,), (d_model,), (d_model, 3 * d_model), (3 * d_model,),
               (d_model, d_model), (d_model,), (d_model,), (d_model,),
               (d_model, 4 * d_model), (4 * d_model,), (4 * d_model, d_model),
               (d_model,)]
  return shapes + [(d_model,), (d_model,)]


def shape_sets(mode: str) -> dict[str, list[tuple[int, ...]]]:
  """The shapes of a run: "full", "quick" (small) or "smoke" (tiny: the
  whole run's code in seconds, for the tests; no figure means anything)."""
  if mode == "smoke":
    return {"2x1k": [(1_000,)] * 2, "5x100": [(100,)] * 5,
            "transformer-1x32": transformer_shapes(1, 32, 256, 32)}
  if mode == "quick":
    return {"10x250k": [(250_000,)] * 10, "50x10k": [(10_000,)] * 50,
            "transformer-2x256": transformer_shapes(2, 256, 4096, 256)}
  return {"100x250k": [(250_000,)] * 100, "2000x10k": [(10_000,)] * 2000,
          "resnet50": resnet50_shapes(),
          "transformer-12x768": transformer_shapes()}


def tree_size(shapes) -> int:
  return sum(int(np.prod(shape)) for shape in shapes)


def bytes_moved(shapes, algorithm: str, itemsize: int = 4) -> int:
  return tree_size(shapes) * itemsize * (3 + 2 * SLOTS[algorithm])


# Each algorithm as (optax's transform, the port's), made fresh per call.
TRANSFORMS: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "sgd-momentum": (lambda: optax.sgd(LEARNING_RATE, momentum=0.9),
                     lambda: jaxopt_port.sgd(LEARNING_RATE, momentum=0.9)),
    "adam": (lambda: optax.adam(LEARNING_RATE),
             lambda: jaxopt_port.adam(LEARNING_RATE)),
    "adamw": (lambda: optax.adamw(LEARNING_RATE, weight_decay=WEIGHT_DECAY),
              lambda: jaxopt_port.adamw(LEARNING_RATE,
                                        weight_decay=WEIGHT_DECAY)),
    "rmsprop": (lambda: optax.rmsprop(LEARNING_RATE),
                lambda: jaxopt_port.rmsprop(LEARNING_RATE)),
    "adagrad": (lambda: optax.adagrad(LEARNING_RATE),
                lambda: jaxopt_port.adagrad(LEARNING_RATE)),
    "lion": (lambda: optax.lion(LEARNING_RATE),
             lambda: jaxopt_port.lion(LEARNING_RATE)),
    "lamb": (lambda: optax.lamb(LEARNING_RATE),
             lambda: jaxopt_port.lamb(LEARNING_RATE)),
}


def _fresh(tree):
  """Device copies that own their buffers (donation needs distinct ones)."""
  return jax.tree.map(lambda x: jax.device_put(np.array(x)), tree)


def _params_and_grads(shapes):
  params = {f"p{i:04d}": np.full(shape, 0.1, np.float32)
            for i, shape in enumerate(shapes)}
  grads = {key: np.full(value.shape, 1e-3, np.float32)
           for key, value in params.items()}
  return params, grads


def jax_step(implementation: str, algorithm: str, shapes):
  """(step, carry, grads): `carry = step(*carry, grads)`, jitted with the
  params and state donated. None if the implementation cannot run it."""
  params, grads = _params_and_grads(shapes)
  if implementation == "roofline":
    size = tree_size(shapes)
    flat = np.full((size,), 0.1, np.float32)

    def roofline(p, slots, g):
      # Reads p, g and each slot, writes p and each slot: the step's bytes.
      return p + g, tuple(s + g for s in slots)
    return (jax.jit(roofline, donate_argnums=(0, 1)),
            _fresh((flat, (flat,) * SLOTS[algorithm])),
            jax.device_put(np.full((size,), 1e-3, np.float32)))
  if implementation == "jaxopt_port.packed":
    try:
      transform = jaxopt_port.packed(TRANSFORMS[algorithm][1]())
    except ValueError:
      return None  # Not elementwise (Lamb's per-layer trust ratio).
    params, grads = jaxopt_port.pack(params), jaxopt_port.pack(grads)
  else:
    make_optax, make_port = TRANSFORMS[algorithm]
    transform = (make_optax if implementation == "optax" else make_port)()
  # The step adds the updates as they are: a port may then write the slots
  # its update reads in place (README, Speed); optax's take no such argument.
  applied = {} if implementation == "optax" else {"applied_as_is": True}

  def step(p, state, g):
    updates, state = transform.update(g, state, p, **applied)
    return optax.apply_updates(p, updates), state
  params = _fresh(params)
  return (jax.jit(step, donate_argnums=(0, 1)),
          (params, _fresh(transform.init(params))), _fresh(grads))


def tf_optimizer(implementation: str, algorithm: str):
  """A fresh optimizer, or None where the implementation has no such
  algorithm (tf_keras legacy has no AdamW, Lion or Lamb)."""
  import keras  # pylint: disable=import-outside-toplevel
  import tf_keras  # pylint: disable=import-outside-toplevel
  import tf_bridge  # pylint: disable=import-outside-toplevel
  implementation = implementation.removesuffix(".xla")
  module = {"keras3": keras.optimizers,
            "tf_keras.legacy": tf_keras.optimizers.legacy,
            "tf_bridge": tf_bridge, "tf_bridge.legacy": tf_bridge.legacy,
            }[implementation]
  class_name, arguments = {
      "sgd-momentum": ("SGD", {"momentum": 0.9}),
      "adam": ("Adam", {}), "adamw": ("AdamW", {"weight_decay": WEIGHT_DECAY}),
      "rmsprop": ("RMSprop", {}), "adagrad": ("Adagrad", {}),
      "lion": ("Lion", {}), "lamb": ("Lamb", {}),
  }[algorithm]
  if not hasattr(module, class_name):
    return None
  return getattr(module, class_name)(learning_rate=LEARNING_RATE, **arguments)


def tf_step(implementation, algorithm, variables, grads):
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  optimizer = tf_optimizer(implementation, algorithm)
  if optimizer is None:
    return None

  @tf.function(jit_compile=implementation.endswith(".xla"))
  def step():
    optimizer.apply_gradients(zip(grads, variables))
  return lambda: step()  # Returns nothing: the assignments are the work.


def tf_problem(shapes):
  """Fresh variables and constant gradients for `shapes`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  params, grads = _params_and_grads(shapes)
  return ([tf.Variable(value) for value in params.values()],
          [tf.constant(value) for value in grads.values()])


def _fit_host(configuration: str):
  """(implementation, jit_compile, the Keras module it runs in), with
  TensorFlow and Keras seeded."""
  implementation, jit_compile = FIT_CONFIGURATIONS[configuration]
  if implementation in ("tf_keras.legacy", "tf_bridge.legacy"):
    import tf_keras as keras  # pylint: disable=import-outside-toplevel
  else:
    import keras  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  tf.random.set_seed(0)
  keras.utils.set_random_seed(0)
  return implementation, jit_compile, keras


def _compiled(model, keras, implementation, jit_compile):
  compile_arguments = {} if jit_compile is None else {
      "jit_compile": jit_compile}
  model.compile(optimizer=tf_optimizer(implementation, "adam"),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True), **compile_arguments)
  return model


def cnn_model(configuration: str, samples: int):
  """A small CNN compiled with the Adam of `configuration` (a key of
  FIT_CONFIGURATIONS), and seeded synthetic 28x28 images with labels."""
  implementation, jit_compile, keras = _fit_host(configuration)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(samples, 28, 28, 1)).astype(np.float32)
  y = rng.integers(0, 10, size=(samples,))
  layers = keras.layers
  model = keras.Sequential([
      keras.Input((28, 28, 1)),
      layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
      layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(),
      layers.Flatten(), layers.Dense(128, activation="relu"),
      layers.Dense(10)])
  return _compiled(model, keras, implementation, jit_compile), x, y


TRANSFORMER = {"vocabulary": 8000, "length": 32, "width": 128, "heads": 4,
               "layers": 4}


def transformer_model(configuration: str, samples: int,
                      layers: int = TRANSFORMER["layers"]):
  """A 4-layer (`layers`) transformer encoder over a token embedding (8000
  x 128, sequences of 32), classifying seeded random sequences into 10
  classes, compiled with the Adam of `configuration`."""
  implementation, jit_compile, keras = _fit_host(configuration)
  size = {**TRANSFORMER, "layers": layers}
  rng = np.random.default_rng(0)
  x = rng.integers(0, size["vocabulary"], size=(samples, size["length"]))
  y = rng.integers(0, 10, size=(samples,))
  layers = keras.layers
  tokens = keras.Input((size["length"],), dtype="int32")
  hidden = layers.Embedding(size["vocabulary"], size["width"])(tokens)
  for _ in range(size["layers"]):
    attended = layers.MultiHeadAttention(
        size["heads"], size["width"] // size["heads"])(hidden, hidden)
    hidden = layers.LayerNormalization()(hidden + attended)
    expanded = layers.Dense(4 * size["width"], activation="relu")(hidden)
    hidden = layers.LayerNormalization()(
        hidden + layers.Dense(size["width"])(expanded))
  pooled = layers.GlobalAveragePooling1D()(hidden)
  model = keras.Model(tokens, layers.Dense(10)(pooled))
  return _compiled(model, keras, implementation, jit_compile), x, y


FIT_MODELS = {"cnn": cnn_model, "transformer": transformer_model}


FIT_BATCH = 32
