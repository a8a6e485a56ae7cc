"""A fake OpenAI-compatible embeddings endpoint: a real HTTP server on 127.0.0.1 answering
`POST /v1/embeddings` as Ollama, llama-server and the OpenAI API do ({"data": [{"index",
"embedding"}], "model", "usage"}).

Its model does what a real one would on a small vocabulary: words that mean the same thing
(CONCEPTS: "deployment", "deploy", "release"; "credential", "key", "token", "secret") share a
direction, every other word has one of its own (hashed), and a text's vector is the mean of
its words'. So a question that shares no word with its answer is near it, and unrelated text
is not. The model's name sets the length of its vectors: "fake-64" (the default), "fake-32".

Errors are scripted with `fail()`: an HTTP status and body for the next N requests (a 200:
the body as it is, JSON or not); `heal()` ends them. Everything it was sent is in `.requests` (`texts()`:
every input, in order). `python tests/fake_embeddings.py --port 8767` runs one by hand."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass

from fakeserver import FakeServer, QuietHandler, serve

CONCEPTS = [
    "deploy deployment deployed deploys release releases shipping ship rollout",
    "credential credentials key keys token tokens secret secrets password",
    "kept keep stored store lives live living located kept held vault",
    "slow slowness latency lag sluggish delay",
    "database db postgres sqlite storage",
    "crash crashed crashes segfault panic",
]
WORD = re.compile(r"[a-z]+")


@dataclass
class Request:
    path: str
    body: dict
    headers: dict


def vector(text: str, dims: int) -> list[float]:
    v = [0.0] * dims
    for word in WORD.findall(text.lower()):
        concept = next((i for i, c in enumerate(CONCEPTS) if word in c.split()), None)
        if concept is not None:
            v[concept] += 1.0
        else:
            h = hashlib.blake2b(word.encode(), digest_size=8).digest()
            v[len(CONCEPTS) + h[0] % (dims - len(CONCEPTS))] += 0.5 if h[1] % 2 else -0.5
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class FakeEmbeddings(FakeServer):
    name = "fake embeddings API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        super().__init__(host, port)
        self._failures: list[tuple[int, str]] = []

    def fail(self, status: int, body: str = '{"error": {"message": "model not loaded"}}', times: int = 1) -> None:
        """The next `times` requests answer `status` with `body` (status 200: `body` as it is)."""
        with self._lock:
            self._failures += [(status, body)] * times

    def heal(self, forget: bool = False) -> None:
        """No more scripted failures (and, with `forget`, no requests on record)."""
        with self._lock:
            self._failures.clear()
            if forget:
                self.requests.clear()

    def texts(self) -> list[str]:
        with self._lock:
            return [t for r in self.requests for t in r.body.get("input", [])]

    def _handler(self):
        fake = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self.send_json(400, {"error": {"message": "not JSON"}})
                with fake._lock:
                    fake.requests.append(Request(self.path, body, dict(self.headers)))
                    failure = fake._failures.pop(0) if fake._failures else None
                if failure is not None:
                    status, said = failure
                    payload = said.encode()
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                model = body.get("model") or "fake-64"
                dims = int(model.rsplit("-", 1)[-1]) if model.rsplit("-", 1)[-1].isdigit() else 64
                data = [{"object": "embedding", "index": i, "embedding": vector(t, dims)} for i, t in enumerate(texts)]
                self.send_json(200, {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 1, "total_tokens": 1}})

        return Handler


if __name__ == "__main__":
    serve(FakeEmbeddings, 8767)
