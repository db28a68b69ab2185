"""frames.py: gRPC frames for the end-to-end scripts' Python (lib.sh puts
this folder on PYTHONPATH): a frame is a 1-byte flag, a 4-byte big-endian
length and that many bytes of message."""


def split(data):
    """The frames of a stream, in order: (flag, message, frame) each."""
    out, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at + 1:at + 5], 'big')
        out.append((data[at], data[at + 5:at + 5 + n], data[at:at + 5 + n]))
        at += 5 + n
    return out


def frame(msg, flag=0):
    """msg as one frame."""
    return bytes([flag]) + len(msg).to_bytes(4, 'big') + msg
