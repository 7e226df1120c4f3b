"""A small example of the file convention: two inputs, three outputs.

    PYTHONPATH=python python3 -m wirespeed_trace compile python/examples/sum_of_squares.py --out s.wtp

``program(inp)`` receives the inputs (traced when compiling, ints when run as the
reference) and returns a dict of named outputs: field elements or conditions.
"""

from wirespeed_trace import Fe25519, select

INPUTS = 2
FIELD = Fe25519


def program(inp):
    a = Fe25519(inp[0])
    b = Fe25519(inp[1])
    s = a * a + b * b
    a_small = inp[0] < 2**128  # compares the raw 256-bit encoding
    return {"sum": s, "a_small": a_small, "min_or_sum": select(a_small, a, s)}
