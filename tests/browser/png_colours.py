#!/usr/bin/env python3
"""Checks a screenshot: its size, and that each colour given (hex, e.g. ffd6d6)
covers at least 2000 pixels of it. Decodes the PNG with the standard library
(8-bit RGB or RGBA, non-interlaced: what Chromium writes).
Usage: png_colours.py FILE WIDTH HEIGHT COLOUR..."""
import struct
import sys
import zlib

def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"FAIL: {path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        raise SystemExit(f"FAIL: unsupported PNG (depth {depth}, colour type {colour_type}, interlace {interlace})")
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, bpp, rows

def main(path, width, height, *colours):
    w, h, bpp, rows = pixels(path)
    if (w, h) != (int(width), int(height)):
        raise SystemExit(f"FAIL: the screenshot is {w}x{h}, expected {width}x{height}")
    counts = {c: 0 for c in colours}
    wanted = {bytes.fromhex(c): c for c in colours}
    for line in rows:
        for x in range(0, len(line), bpp):
            c = wanted.get(bytes(line[x:x + 3]))
            if c: counts[c] += 1
    missing = [f"#{c} ({n} pixels)" for c, n in counts.items() if n < 2000]
    if missing:
        raise SystemExit("FAIL: not on the first screen: " + ", ".join(missing))
    print("first screen holds " + ", ".join(f"#{c}: {n} pixels" for c, n in counts.items()))

if __name__ == "__main__":
    main(*sys.argv[1:])
