"""Images as OpenAI content parts: encoding, validation, the text-only refusal (real SmolLM2),
and the wire format checked against a small local test server (not an LLM)."""

from io import BytesIO
from typing import ClassVar

import numpy as np
import pytest
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.core.llm import LLMUnsupported, OpenAIChatModel, image_part, user_message
from iclr26.core.llm.images import decode_data_url, has_images
from tests.core.llm.json_server import JSONHandler, serve


def pixels(part):
    mime, data = decode_data_url(part["image_url"]["url"])
    return mime, np.asarray(Image.open(BytesIO(data)))


def test_array_round_trips_through_a_png_data_url():
    rgb = np.random.default_rng(0).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    mime, back = pixels(image_part(rgb))
    assert mime == "image/png" and np.array_equal(back, rgb)
    grey = np.linspace(0, 1, 12).reshape(3, 4)
    assert np.array_equal(pixels(image_part(grey))[1], np.round(grey * 255).astype(np.uint8))


def test_pil_image_and_files(tmp_path):
    img = Image.new("RGB", (4, 3), (200, 10, 30))
    assert pixels(image_part(img))[1][0, 0].tolist() == [200, 10, 30]
    img.save(tmp_path / "a.png")
    img.save(tmp_path / "b.jpg")
    assert pixels(image_part(tmp_path / "a.png"))[0] == "image/png"
    mime, data = decode_data_url(image_part(str(tmp_path / "b.jpg"))["image_url"]["url"])
    assert mime == "image/jpeg" and data == (tmp_path / "b.jpg").read_bytes()  # file bytes as they are


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.zeros((2, 2, 2), np.uint8), "shape"),
        (np.full((2, 2), 2.0), r"\[0, 1\]"),
        (np.zeros((2, 2), np.int32), "dtype"),
        ("missing.png", "does not exist"),
        ("picture.gif", "must end in"),
    ],
)
def test_bad_images_name_the_problem(bad, match):
    with pytest.raises(UserError, match=match):
        image_part(bad)


def test_user_message_and_has_images():
    m = user_message("What is it?", np.zeros((2, 2, 3), np.uint8))
    assert m["content"][0] == {"type": "text", "text": "What is it?"} and has_images([m])
    assert user_message("plain") == {"role": "user", "content": "plain"} and not has_images(
        [user_message("x")]
    )


@pytest.mark.llm
def test_text_only_backend_refuses_images(smollm2):
    msg = [user_message("Describe the image.", np.zeros((8, 8, 3), np.uint8))]
    assert smollm2.supports_images is False
    with pytest.raises(LLMUnsupported, match=r"embedded:SmolLM2.*cannot see images.*ICLR26_LLM_BASE_URL"):
        smollm2.chat(msg)
    with pytest.raises(LLMUnsupported, match="cannot see images"):
        smollm2.stream(msg)
    # text-only parts are fine: joined into one string for the chat template
    parts = [{"role": "user", "content": [{"type": "text", "text": "Say"}, {"type": "text", "text": "hi."}]}]
    assert smollm2.chat(parts, max_tokens=5)[0].text


class _Recorder(JSONHandler):
    """A local OpenAI-compatible *test server* (not a model): records bodies, answers one line."""

    bodies: ClassVar[list[dict]] = []

    def do_POST(self):
        type(self).bodies.append(self.read_json())
        reply = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "a red square"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 3},
        }
        self.send_json(reply)


def test_vision_request_wire_format():
    with serve(_Recorder) as url:
        client = OpenAIChatModel(f"{url}/v1", model="Qwen/Qwen2.5-VL-7B-Instruct")
        red = np.zeros((6, 6, 3), np.uint8)
        red[..., 0] = 255
        [c] = client.chat([user_message("What colour?", red)], max_tokens=8)
        assert c.text == "a red square" and client.usage.total.prompt_tokens == 30
        body = _Recorder.bodies[-1]
        content = body["messages"][0]["content"]
        assert body["model"] == "Qwen/Qwen2.5-VL-7B-Instruct"
        assert content[0] == {"type": "text", "text": "What colour?"}
        assert content[1]["type"] == "image_url"
        assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert np.array_equal(pixels(content[1])[1], red)  # the pixels arrive intact


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ([], "non-empty list"),
        ([{"type": "image_url", "image_url": {"url": "file:///x.png"}}], "data: or http"),
        ([{"type": "audio", "data": "..."}], r"content'\]\[0\]"),
    ],
)
def test_bad_content_parts_are_rejected_before_sending(content, match):
    client = OpenAIChatModel("http://127.0.0.1:9/v1")
    with pytest.raises(UserError, match=match):
        client.chat([{"role": "user", "content": content}])
