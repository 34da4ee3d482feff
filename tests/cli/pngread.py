# SPDX-License-Identifier: MIT
"""A PNG decoder for the report's screenshot tests: Python's zlib only.

Reads what headless Chromium writes (8-bit RGB or RGBA, not interlaced);
anything else raises ValueError.  Also writes a crop of an image back as a
PNG (for looking at a part of a tall screenshot)."""
import struct
import zlib


def decode(data):
    """(width, height, channels, rows): rows a list of bytes, one a row."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if not hdr:
        raise ValueError("no IHDR")
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, ctype, interlace))
    ch = 4 if ctype == 6 else 3
    raw = zlib.decompress(b"".join(idat))
    stride = w * ch
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[at]
        line = bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        elif f != 0:
            raise ValueError("bad filter %d" % f)
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def encode(w, h, ch, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6 if ch == 4 else 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def crop(img, x0, y0, x1, y1):
    w, h, ch, rows = img
    x1, y1 = min(x1, w), min(y1, h)
    return x1 - x0, y1 - y0, ch, [r[x0 * ch:x1 * ch] for r in rows[y0:y1]]


def distinct_colours(img, x0, y0, x1, y1, step=2):
    """The colours (RGB) in a region, sampled every step pixels."""
    w, h, ch, rows = img
    seen = set()
    for y in range(max(0, y0), min(h, y1), step):
        r = rows[y]
        for x in range(max(0, x0), min(w, x1), step):
            seen.add(bytes(r[x * ch:x * ch + 3]))
    return seen
