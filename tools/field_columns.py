#!/usr/bin/env python3
"""Prints the column sums of the lane field backends' multiplication and squaring.

The bodies of `mul` and `square` in crates/field/src/avx2.rs (radix 2^25.5, ten limbs)
and crates/field/src/ifma.rs (radix 2^51 with 52-bit IFMA products) were produced by
this script and pasted in; regenerate and diff when changing either representation:

    python3 tools/field_columns.py avx2
    python3 tools/field_columns.py ifma
"""
import sys


def odd(i):
    return i % 2 == 1


def tree(terms, join="add64"):
    terms = list(terms)
    while len(terms) > 1:
        nxt = [f"{join}({terms[i]}, {terms[i + 1]})" for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms = nxt
    return terms[0]


def avx2():
    # h_k = sum over i+j = k (mod 10) of f_i g_j, doubled when i and j are both odd
    # (radix 2^25.5 rounding), times 19 when i + j >= 10 (2^255 = 19).
    print("// mul")
    for k in range(10):
        t = []
        for i in range(10):
            j = (k - i) % 10
            a = f"f2[{i}]" if odd(i) and odd(j) else f"f[{i}]"
            b = f"g19[{j}]" if i + j >= 10 else f"g[{j}]"
            t.append(f"mul32({a}, {b})")
        print(f"let h{k} = {tree(t)};")
    print("// square")
    for k in range(10):
        t = []
        for i in range(10):
            for j in range(i, 10):
                if (i + j) % 10 != k:
                    continue
                c = (1 if i == j else 2) * (2 if odd(i) and odd(j) else 1)
                a = {1: f"f[{i}]", 2: f"f2[{i}]", 4: f"f4[{i}]"}[c]
                b = f"f19[{j}]" if i + j >= 10 else f"f[{j}]"
                t.append(f"mul32({a}, {b})")
        print(f"let h{k} = {tree(t)};")


def ifma():
    # lo52(a_i b_j) lands in column i+j, hi52(a_i b_j) in column i+j+1.
    print("// mul")
    for k in range(10):
        for kind, fn, off in (("lo", "lo52", 0), ("hi", "hi52", 1)):
            acc = "z"
            for i in range(5):
                j = k - off - i
                if 0 <= j < 5:
                    acc = f"{fn}({acc}, a[{i}], b[{j}])"
            print(f"let {kind}{k} = {acc};")
    print("// square: cross products once, doubled")
    for kind, fn, off in (("lo", "lo52", 0), ("hi", "hi52", 1)):
        for k in range(10):
            d, c = "z", "z"
            has_d = has_c = False
            for i in range(5):
                for j in range(i, 5):
                    if i + j + off != k:
                        continue
                    if i == j:
                        d, has_d = f"{fn}({d}, a[{i}], a[{j}])", True
                    else:
                        c, has_c = f"{fn}({c}, a[{i}], a[{j}])", True
            e = f"add(add({c}, {c}), {d})" if has_c and has_d else (f"add({c}, {c})" if has_c else d)
            print(f"let {kind}{k} = {e};")


if __name__ == "__main__":
    {"avx2": avx2, "ifma": ifma}[sys.argv[1] if len(sys.argv) > 1 else "avx2"]()
