"""The suite's sample of its per-class checks that run whole in the long
profile (tests/long_profile.sh sets TEST_EVERY_CASE=1).

Every class takes each such check's central part in the suite (its
trajectory against native and its port, in a `tf.function`); every third
class of a parametrization (and every class in the long profile) takes the
rest: the other programs, the eager step, the mutants that prove the check
can fail. A check's `shift` moves its third, so that each class takes some
whole check in every run and each step of each check runs on classes of
every generation, inside the suite's time budget (docs/development.md)."""

import os

EVERY_CASE = os.environ.get("TEST_EVERY_CASE") == "1"


def whole(index: int, shift: int = 0) -> bool:
  """Whether the class at `index` of a parametrization runs a sampled
  check shifted by `shift` whole here."""
  return EVERY_CASE or (index + shift) % 3 == 0


def traced_and_eager(count: int, shift: int) -> list[tuple[int, bool]]:
  """(index, in_function) of a check that runs each of `count` cases in a
  `tf.function`, and eagerly too where `whole(index, shift)`."""
  return [(index, in_function) for index in range(count)
          for in_function in (False, True)
          if in_function or whole(index, shift)]
