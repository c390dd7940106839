#!/usr/bin/env python3
"""Derives h_coefficients in lib/jit/vector_math.cpp and prints their error.

h(r) = (e^r - 1) / r on |r| <= ln2/2, degree 5: a Chebyshev fit (mpmath.chebyfit,
close to minimax) rounded to float, then each of the four highest coefficients
moved by up to 3 ulps while that lowers the largest relative error of h over
4001 points (evaluated in double against mpmath at 30 digits). Prints the
coefficients as C++ hex floats, highest degree first, and the largest relative
errors of h and of e^r = 1 + r*h(r), beside the degree-7 Taylor polynomial's.
A maintainer's tool, not part of the build or tests: needs python3-mpmath.
"""
import math
import re
import struct

import mpmath as mp

DEGREE = 5
POINTS = 4001


def to_float(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def ulps_away(x, steps):
    bits = struct.unpack("I", struct.pack("f", x))[0]
    return struct.unpack("f", struct.pack("I", bits + steps))[0]


def main():
    mp.mp.dps = 30
    half = math.log(2) / 2
    rs = [-half + 2 * half * i / (POINTS - 1) for i in range(POINTS)]
    rs = [r for r in rs if r != 0]
    h_exact = [float(mp.expm1(r) / r) for r in rs]
    exp_exact = [float(mp.exp(r)) for r in rs]

    def errors(coefficients):
        worst_h = worst_exp = 0.0
        for r, h, e in zip(rs, h_exact, exp_exact):
            v = 0.0
            for c in coefficients:
                v = v * r + c
            worst_h = max(worst_h, abs(v / h - 1))
            worst_exp = max(worst_exp, abs((1 + r * v) / e - 1))
        return worst_h, worst_exp

    fit = mp.chebyfit(lambda r: mp.expm1(r) / r if r else mp.mpf(1), [-half, half], DEGREE + 1)
    best = [to_float(c) for c in fit]
    best_error = errors(best)
    improved = True
    while improved:
        improved = False
        for j in range(4):
            for steps in (-3, -2, -1, 1, 2, 3):
                trial = list(best)
                trial[j] = ulps_away(best[j], steps)
                trial_error = errors(trial)
                if trial_error[0] < best_error[0]:
                    best, best_error, improved = trial, trial_error, True
    taylor = [to_float(1 / math.factorial(k + 1)) for k in range(DEGREE + 1, -1, -1)]
    print("h_coefficients:", ", ".join(re.sub("0*p", "p", float.hex(c)) + "f" for c in best))
    print("largest relative error: h %.3g, e^r %.3g" % best_error)
    print("degree-7 Taylor e^r (h of degree 6): h %.3g, e^r %.3g" % errors(taylor))


if __name__ == "__main__":
    main()
