"""The tests read the checkout's vrlog package (python/vrlog), installed or
not, and the repository's test data."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

REPO = os.path.dirname(os.path.dirname(HERE))
TESTDATA = os.path.join(REPO, "testdata")
