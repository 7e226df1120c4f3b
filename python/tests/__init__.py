"""Tests of wirespeed_trace (standard library only):

    python3 -m unittest discover -s python/tests -t python
"""
