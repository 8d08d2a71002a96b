"""Keras optimizers as optax gradient transformations.

`jaxopt_port.<name>` computes what `keras.optimizers.<Name>` (Keras 3)
computes; `jaxopt_port.legacy.<name>` what `tf_keras.optimizers.legacy.<Name>`
(OptimizerV2) computes; `tf_keras` what `tf_keras.optimizers.<Name>` (its
2.11+ generation) computes; `tf1`, `addons`, `hf`, `tf_models` and `tfrs`
hold TF1's, TF Addons', Hugging Face's, TF Model Garden's and TF
Recommenders'. Each returns an `optax.GradientTransformationExtraArgs`
whose state is an explicit pytree mirroring Keras's optimizer variables.
"""

from jaxopt_port import (addons, hf, legacy, schedules, tf1, tf_keras,
                         tf_models, tfrs)
from jaxopt_port._adadelta import adadelta
from jaxopt_port._adafactor import adafactor
from jaxopt_port._adagrad import adagrad, adagrad_decay
from jaxopt_port._adam import adam, adamw
from jaxopt_port._adamax import adamax
from jaxopt_port._base import (KerasState, LegacyState, UpdateStep,
                               keras_transform, legacy_transform,
                               with_keras_base_arguments,
                               with_legacy_base_arguments)
from jaxopt_port._ftrl import ftrl
from jaxopt_port._classic import centered_momentum_sgd, momentum_sgd, vanilla_sgd
from jaxopt_port._lamb import lamb
from jaxopt_port._lion import lion
from jaxopt_port._multi_optimizer import multi_optimizer
from jaxopt_port._muon import muon
from jaxopt_port._nadam import nadam
from jaxopt_port._nonfinite import SkipNonfiniteState, skip_nonfinite
from jaxopt_port._packed import PackedTree, pack, packed, unpack
from jaxopt_port._rmsprop import rmsprop
from jaxopt_port._row_sparse import (RowSparse, UnknownEntriesError,
                                     apply_updates, sparse_mode,
                                     with_row_sparse_gradients)
from jaxopt_port._schedule_free import schedule_free_adamw
from jaxopt_port._sgd import sgd

__version__ = "0.1.0"

__all__ = [
    "KerasState", "LegacyState", "PackedTree", "RowSparse",
    "SkipNonfiniteState", "UnknownEntriesError",
    "UpdateStep", "adadelta",
    "addons", "adafactor", "adagrad", "adagrad_decay", "adam", "adamax",
    "adamw", "apply_updates", "centered_momentum_sgd", "ftrl", "hf",
    "keras_transform", "lamb",
    "legacy", "legacy_transform", "lion", "momentum_sgd", "multi_optimizer",
    "muon", "nadam", "pack", "packed", "rmsprop", "schedule_free_adamw",
    "schedules", "sgd", "skip_nonfinite", "sparse_mode", "tf1",
    "tf_keras", "tf_models", "tfrs", "unpack",
    "vanilla_sgd", "with_keras_base_arguments", "with_legacy_base_arguments",
    "with_row_sparse_gradients",
]
