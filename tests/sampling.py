"""The suite's sample of its per-class program checks, which run whole in
the long profile (tests/long_profile.sh sets TEST_EVERY_CASE=1).

Every class takes each such check's central part in the suite; every third
class of a parametrization (and every class in the long profile) takes the
whole check, so each program and step of it runs on classes of every
generation in every run, inside the suite's time budget
(docs/development.md)."""

import os

EVERY_CASE = os.environ.get("TEST_EVERY_CASE") == "1"


def whole(index: int) -> bool:
  """Whether the class at `index` of a parametrization runs a sampled
  check whole here."""
  return EVERY_CASE or index % 3 == 0
