"""An image a tool attached is kept on disk, not in memory: the context holds a reference to
the stored bytes and makes base64 only for what it hands on, and the token count of a long
text (an image's base64) is made a piece at a time. Numbers: tests/benchmarks/attachments.py.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.benchmarks.attachments import attaching_capsule
from tests.benchmarks.hostile import session_peak_rss
from tui.core.chat import tool_message
from tui.core.loop.context import Context
from tui.core.record.attachments import AttachmentStore
from tui.core.text import tokens

MIB = 1 << 20
GROWTH_BOUND = 64 * MIB  # generous: it is ~15 MiB; it was ~150 MiB while images stayed as
#                          base64 and their base64 was counted whole


def test_four_large_attachments_add_little_to_a_sessions_peak_memory(tmp_path: Path) -> None:
    # uniform bytes: their base64 is one run of letters, the costliest text to count
    def peak(label: str, size: int) -> int:
        root = attaching_capsule(tmp_path / label, [size] * 4, uniform=True)
        rss, code, stdout = session_peak_rss(root, tmp_path / f"home-{label}", "--workdir",
                                             str(root / "work"))
        assert code == 0 and "4 tool calls" in stdout, stdout
        return rss

    small, large = peak("small", 1024), peak("large", 2 * MIB)
    assert large - small < GROWTH_BOUND, f"grew by {(large - small) / MIB:.0f} MiB"


def test_the_context_holds_a_stored_image_by_reference_and_sends_it_as_base64(
        tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path / "attachments")
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(4096)
    digest = store.put(data)
    reference = {"type": "image", "source": {"type": "sha256", "media_type": "image/png",
                                             "sha256": digest}}
    message = tool_message("c1", False, "attached", "tool:t")
    message["content"].append(reference)
    context = Context(store)
    context.append(message, record=False)
    assert context.payload[0]["content"][1] == reference  # no bytes held
    request = context.request({"model": "m"}, list(context.payload))
    assert request["messages"][0]["content"][1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png",
        "data": base64.b64encode(data).decode()}}
    assert context.payload[0]["content"][1] == reference  # still none after sending
    # what is counted is what is sent
    assert context.count() == tokens.count(tokens.serialize_payload({}, request["messages"]))


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.sampled_from(["base64", "prose", "mixed"]))
def test_counting_a_long_text_in_pieces_gives_tiktokens_count(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    size = 3 * tokens.PIECE + rng.randrange(tokens.PIECE)
    if kind == "base64":
        text = base64.b64encode(rng.randbytes(size * 3 // 4)).decode()
    elif kind == "prose":
        words = ["the", "naïve", "cat's", "2024", "x1", "½", "日本語", "—", "\n", "  ", "ab12"]
        text = " ".join(rng.choice(words) for _ in range(size // 4))
    else:
        text = "".join(rng.choice("aé1½ \n.Ⅳ'_-+/=Z9") for _ in range(size))
    assert tokens.count(text) == len(tokens.encoding().encode_ordinary(text))
