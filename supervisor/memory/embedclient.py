"""An OpenAI-compatible embeddings endpoint (`POST .../v1/embeddings`), as the user set it in
`[memory] embeddings`: their local model server (Ollama, llama-server, LM Studio, vLLM, text
embeddings inference) or a hosted API. Masked text goes in, unit vectors come out. The
standard library's HTTP client: one request per batch, nothing kept open."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..config import Memory
from ..plaintext import plain

BATCH = 64  # texts a request carries
TIMEOUT = 30.0  # seconds a request may take (a local model embedding a batch on a busy CPU)
QUERY_TIMEOUT = 10.0  # seconds a search waits for its question's vector before it answers by words alone


class Unavailable(Exception):
    """The endpoint could not embed: `line` says why, in a line the user can act on."""

    def __init__(self, line: str):
        super().__init__(line)
        self.line = line


@dataclass(frozen=True)
class Client:
    url: str
    model: str | None = None
    key: str | None = None
    timeout: float = TIMEOUT

    @property
    def endpoint(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/embeddings") else base + "/embeddings"

    @property
    def name(self) -> str:
        """What the vectors are known by: vectors of another model are never compared with these."""
        return self.model or self.endpoint

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Each text's vector, of length 1, in order (Unavailable when the endpoint fails)."""
        out: list[list[float]] = []
        for i in range(0, len(texts), BATCH):
            out += self._batch(texts[i : i + BATCH])
        return out

    def _batch(self, texts: list[str]) -> list[list[float]]:
        import urllib.error
        import urllib.request  # (it loads ssl: not in a process that never embeds)

        body: dict = {"input": texts, "encoding_format": "float"}
        if self.model:
            body["model"] = self.model
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.endpoint, json.dumps(body).encode(), headers, method="POST")
        where = plain(self.endpoint, newlines=False)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                data = json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            said = plain(exc.read(300).decode("utf-8", "replace"), newlines=False)
            raise Unavailable(f"the embeddings endpoint {where} answered HTTP {exc.code}: {said[:200]}") from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", None) or exc
            raise Unavailable(f"cannot reach the embeddings endpoint {where}: {plain(str(why), newlines=False)}") from None
        except ValueError:
            raise Unavailable(f"the embeddings endpoint {where} did not answer with JSON") from None
        return _vectors(data, len(texts), where)


def _vectors(data: object, count: int, where: str) -> list[list[float]]:
    """The answer's vectors in the order asked, each scaled to length 1."""
    try:
        rows = sorted(data["data"], key=lambda row: row.get("index", 0))  # type: ignore[index]
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise Unavailable(
            f"the embeddings endpoint {where} did not answer as an OpenAI embeddings API ({{data: [{{embedding}}]}})"
        ) from None
    if len(vectors) != count or not vectors or len({len(v) for v in vectors}) != 1 or not vectors[0]:
        raise Unavailable(f"the embeddings endpoint {where} gave {len(vectors)} vectors of uneven or no length for {count} texts")
    out = []
    for v in vectors:
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        out.append([x / norm for x in v])
    return out


def client(memory: Memory, timeout: float = TIMEOUT) -> Client | None:
    """The endpoint the settings name, if any."""
    if not memory.embeddings:
        return None
    return Client(memory.embeddings, memory.embeddings_model, memory.embeddings_key, timeout)
