# SPDX-License-Identifier: BSD-3-Clause
"""inet_cksum.py - the Internet checksum (RFC 1071) for the segments the
integration tests forge (hostile.py, challenge_ack.py)."""
import struct


def checksum(data):
    """The one's complement of the one's complement sum of @data's 16-bit
    words (a trailing odd byte padded with zero)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF
