"""The strict mode's public-key (A) check as a compilable program:

    PYTHONPATH=python python3 -m wirespeed_trace compile python/examples/decode_strict_a.py --out a.wtp

Input: the 32-byte key. Outputs: ok (decodes, not of small order), then x and y.
"""

from wirespeed_trace.rfc8032 import MODE_RULES, decode

INPUTS = 1


def program(inp):
    return decode(inp[0], MODE_RULES[("strict", "A")])
