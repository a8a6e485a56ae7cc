"""Search by meaning, beside the words: the question embedded by the user's endpoint, the
lines nearest to it (cosine of unit vectors, numpy over the scope's rows of store/vectors.py),
each a hit, and the two rankings fused (reciprocal rank fusion): a line both find comes
first, then each ranking's best in turn. A question that shares no word with its answer
finds it; a word that is in the logs still finds its line first."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..store import searched, vectors
from ..store.database import Store
from . import query
from .embedclient import QUERY_TIMEOUT, Client, Unavailable

FUSION_K = 5  # reciprocal rank fusion's constant: a rank's weight is 1 / (FUSION_K + rank)
LESS = 0.5  # the weight of the weaker ranking: the meaning's where lines hold every word, else the words'
BLOCK = 8192  # vectors compared at a time
PER_ROW = 32  # the nearest passages looked at for each row wanted (a row holds many near ones)
NUMPY = ("search by meaning needs numpy", "pip install 'supervise-agents[embeddings]'")  # what is wrong, the fix


@dataclass(frozen=True)
class Meaning:
    """A question as one model's vector."""

    model: int
    question: list[float]


def asked(store: Store, client: Client, text: str) -> Meaning | None:
    """The question embedded; None while no vector of the model is kept (nothing to compare).
    Unavailable when the endpoint fails or numpy is missing."""
    model = vectors.embedder(store.conn, client.name)
    dims = vectors.dims(store.conn, model) if model is not None else 0
    if model is None or not dims:
        return None
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise Unavailable(f"{NUMPY[0]} (hint: {NUMPY[1]})") from None
    (question,) = client.embed([text])
    if len(question) != dims:
        raise Unavailable(
            f"the embeddings endpoint gives vectors of {len(question)}, its kept ones are of {dims}"
            " (hint: another model behind the same name: `supervise search --embed` embeds again)"
        )
    return Meaning(model, question)


def prepared(store: Store, client: Client | None, text: str, note, timeout: float = QUERY_TIMEOUT) -> Meaning | None:
    """`asked`, for a search that goes on by words alone when it cannot: `note` is given the
    line that says why."""
    if client is None:
        return None
    try:
        return asked(store, replace(client, timeout=min(client.timeout, timeout)), text)
    except Unavailable as exc:
        note(f"{exc.line}; this search is by words alone")
        return None


def nearest(store: Store, meaning: Meaning, where: str, params: dict, n: int) -> list[tuple[float, dict]]:
    """The `n` chunks and contexts in scope nearest the question, nearest first: (cosine, row)
    with its source, id, passage (start, end), session and time."""
    import numpy as np

    rows = store.conn.execute(
        "select v.source, v.row, v.spans, v.scales, v.vectors, s.id, s.agent, s.project, s.branch, s.project_key,"
        " coalesce(c.created, s.started) from passage_vectors v join sessions s on s.id = v.session_id"
        " left join contexts c on v.source = 'context' and c.id = v.row"
        f" where v.embedder = :model and length(v.vectors) > 0{where}",
        {**params, "model": meaning.model},
    ).fetchall()
    if not rows:
        return []
    question = np.asarray(meaning.question, np.float32)
    matrix = np.frombuffer(b"".join(r[4] for r in rows), np.int8).reshape(-1, len(question))
    scores = np.frombuffer(b"".join(r[3] for r in rows), "<f4").copy()
    for at in range(0, len(matrix), BLOCK):  # (a block at a time: its floats stay in the cache)
        scores[at : at + BLOCK] *= matrix[at : at + BLOCK].astype(np.float32) @ question
    counts = np.array([len(r[3]) // 4 for r in rows])
    owner = np.repeat(np.arange(len(rows)), counts)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    out: list[tuple[float, dict]] = []
    for i in _best(scores, owner, n):
        o = int(owner[i])
        source, row, spans, _, _, sid, agent, project, branch, key, when = rows[o]
        span = vectors.spans_of(spans)[int(i - first[o])]
        session = {"session_id": sid, "agent": agent, "project": project, "branch": branch, "project_key": key}
        out.append((float(scores[i]), {"source": source, "row": row, "span": span, "session": session, "when": when or ""}))
    return out


def _best(scores, owner, n: int):
    """The best passage of each of the `n` best rows, best first: among the best PER_ROW * n
    passages, or all of them where those are of fewer rows."""
    import numpy as np

    k = min(len(scores), n * PER_ROW)
    while True:
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        _, firsts = np.unique(owner[top], return_index=True)
        if len(firsts) >= n or k == len(scores):
            return top[np.sort(firsts)][:n]
        k = len(scores)


def hits(store: Store, found: list[tuple[float, dict]], terms: list[str], hit) -> list:
    """The nearest rows as hits (`hit`: search.Hit), each shown as its line nearest the question."""
    out = []
    for score, f in found:
        row = searched.text_of(store.conn, f["source"], f["row"])
        if row is None:
            continue
        (start, end), s = f["span"], f["session"]
        facts = (s["session_id"], s["agent"], s["project"], s["branch"], s["project_key"], f["when"], f["source"])
        shown = query.mark(query.around(row[0][start:end], 0), set(terms), start)
        if f["source"] == "log":
            offset = row[1] + len(row[0][:start].encode("utf-8"))
            out.append(hit(f"{s['session_id']}@{offset}", *facts, offset, None, shown, -score))
        else:
            out.append(hit(f"{s['session_id']}#{row[1]}", *facts, None, row[1], shown, -score))
    return out


def fused(words: list, meaning: list, loose: bool = False) -> list:
    """The hits of both rankings in one: reciprocal rank fusion over the lines they show (a
    line both find is shown once, by its words' marks). Lines that hold every word of the
    question count more than those near its meaning; lines that hold only some of them
    (`loose`), less."""

    def ranks(hits: list) -> dict:
        order: dict = {}
        for h in hits:
            order.setdefault(_line(h), len(order))
        return order

    by_words, by_meaning = ranks(words), ranks(meaning)
    weight, other = (LESS, 1.0) if loose else (1.0, LESS)
    score = {k: weight / (FUSION_K + r) for k, r in by_words.items()}
    for k, r in by_meaning.items():
        score[k] = score.get(k, 0.0) + other / (FUSION_K + r)
    shown = words + [h for h in meaning if _line(h) not in by_words]
    position = {id(h): i for i, h in enumerate(shown)}
    return sorted(shown, key=lambda h: (-score[_line(h)], position[id(h)]))


def _line(hit) -> tuple:
    return hit.session_id, hit.source, hit.line.text
