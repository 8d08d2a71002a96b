"""The suite's sample of its per-class checks that run whole in the long
profile (tests/long_profile.sh sets TEST_EVERY_CASE=1).

Every class takes each such check's central part in the suite (its
trajectory against native and its port, in a `tf.function`, at every point
of its own grid); every sixth class of a parametrization (and every class
in the long profile) takes the rest: the other programs, the eager step,
the mutants that prove the check can fail, its generation's grid of base
arguments. A check's `shift` (0 to 5, a different one per check over the
same classes) moves its sixth, so that the sampled checks fall on
different classes and each step of each check runs on classes of every
generation, inside the suite's time budget (docs/development.md)."""

import os

EVERY_CASE = os.environ.get("TEST_EVERY_CASE") == "1"
EVERY = 6


def whole(index: int, shift: int = 0) -> bool:
  """Whether the class at `index` of a parametrization runs a sampled
  check shifted by `shift` whole here."""
  return EVERY_CASE or (index + shift) % EVERY == 0


def traced_and_eager(count: int, shift: int) -> list[tuple[int, bool]]:
  """(index, in_function) of a check that runs each of `count` cases in a
  `tf.function`, and eagerly too where `whole(index, shift)`."""
  return [(index, in_function) for index in range(count)
          for in_function in (False, True)
          if in_function or whole(index, shift)]
