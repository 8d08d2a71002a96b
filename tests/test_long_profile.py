"""The long profile (tests/long_profile.sh) runs whole every check the suite
samples (tests/sampling.py): each test module that imports `sampling` is
one the profile names."""

import pathlib
import re

TESTS = pathlib.Path(__file__).resolve().parent


def test_the_long_profile_runs_every_sampled_module():
  profile = (TESTS / "long_profile.sh").read_text(encoding="utf-8")
  sampled = sorted(path.name for path in TESTS.glob("*.py")
                   if re.search(r"^import sampling$",
                                path.read_text(encoding="utf-8"), re.M))
  assert "test_native_parity.py" in sampled
  assert [name for name in sampled if name not in profile] == []
