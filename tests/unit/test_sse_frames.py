"""The transport's SSE framing (``transport._Frames``) against httpx-sse's own decoder, line by line.

``_Frames`` reads only the ``data`` field, one list per network read; httpx-sse's ``SSEDecoder`` is
the reference reading of the standard. Both must find the same data in any stream, however it is
cut into reads. An event whose data is empty carries nothing for an AG-UI client (``_take`` drops
it), so only events with data are compared.
"""

from __future__ import annotations

import random

import pytest
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from interrupt_chat.agui.transport import _Frames

LINES = [
    "data: {\"a\": 1}", "data:{\"tight\": 2}", "data", "data:", "data: ", "data:  two spaces",
    "dataX: not data", "datum: no", "Data: wrong case", "data : space before colon",
    ": a comment", ":", "event: message", "id: 7", "id", "retry: 10", "retry: x", "foo: bar", "no colon at all",
    "data: a: b: c", "data: üñí 😀", "data:\u00a0nbsp", "",
]
BREAKS = ["\n", "\r\n", "\r"]


def reference(stream: str) -> list[str]:
    """The data of each event with data, as httpx-sse decodes the whole stream."""
    lines, decoder, out = SSELineDecoder(), SSEDecoder(), []
    for line in lines.decode(stream) + lines.flush():
        event = decoder.decode(line)
        if event is not None and event.data:
            out.append(event.data)
    return out


def framed(stream: str, cuts: list[int]) -> list[str]:
    """The data ``_Frames`` finds in ``stream`` fed in pieces cut at ``cuts``."""
    frames, out, at = _Frames(), [], 0
    for cut in [*cuts, len(stream)]:
        out += frames.feed(stream[at:cut])
        at = cut
    return [data for data in out + frames.flush() if data]


@pytest.mark.parametrize("stream, expected", [
    ("data: x\n\n", ["x"]),
    ("data:x\n\n", ["x"]),  # no space after the colon
    ("data:  x\n\n", [" x"]),  # only the first space is the separator
    ("data\ndata: y\n\n", ["\ny"]),  # a bare field name is the field with an empty value
    ("dataX: no\ndata: y\n\n", ["y"]),  # a longer field name is another field
    ("data: a\n: a comment between data lines\ndata: b\n\n", ["a\nb"]),
    ("data: a\nid: 1\nevent: e\nretry: 5\ndata: b\n\n", ["a\nb"]),
    ("data: a\r\n\r\ndata: b\r\rdata: c\n\n", ["a", "b", "c"]),
    ("data: last\n", []),  # no blank line: the event never completes
    ("id: only\n\n", []),
])
def test_the_data_fields_of_a_stream(stream, expected):
    assert framed(stream, []) == expected == reference(stream)


def test_any_stream_cut_anywhere_reads_as_httpx_sse_reads_it():
    rng = random.Random(45)
    for _ in range(400):
        break_ = rng.choice(BREAKS)
        stream = "".join(rng.choice(LINES) + (break_ if rng.random() < 0.9 else rng.choice(BREAKS))
                         for _ in range(rng.randint(1, 30)))
        cuts = sorted(rng.sample(range(len(stream) + 1), k=min(len(stream), rng.randint(0, 8))))
        assert framed(stream, cuts) == reference(stream), (stream, cuts)
