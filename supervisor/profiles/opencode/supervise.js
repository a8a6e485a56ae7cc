// supervise's door into OpenCode (and Kilo, built on it), given for one run as a `file://`
// plugin in its config variable (the user's own plugins load too). Once loaded it tells
// supervise the door is open. When a compaction of the user's session ends it asks for the
// session's context (it waits while the context is being made) and keeps it; the context then
// goes into the session's record as a part of the user's next message, before their words,
// and into every request before that (a compaction that carries on by itself). As the user
// sends a message it also asks for whatever else is due (a resumed session's context, a brief,
// a context that was not ready when the compaction ended). It asks over the Unix socket named
// in SUPERVISE_HOOK_SOCKET (supervise-ask.js, copied beside it); nothing is typed. It imports
// nothing it would have to install, and whatever goes wrong, it adds nothing: OpenCode awaits
// each hook and a throw would fail the turn.
import { SOCKET, ask, open, sleep } from "./supervise-ask.js";

const MARK = "supervise_context"; // in the metadata of the parts it adds
const EVENT_WAIT_MS = 2000; // how long a request after a compaction waits for the compaction's event

function random(n) {
  const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let out = "";
  for (let i = 0; i < n; i++) out += chars[Math.floor(Math.random() * chars.length)];
  return out;
}

// A part id that sorts before every one of `parts` (a message's parts are read back in the
// order of their ids: `prt_`, 12 hex digits of time and count, 14 random characters), or
// undefined when they have none of that form.
function before(parts) {
  const ids = parts.map((p) => p && p.id).filter((id) => typeof id === "string" && /^prt_[0-9a-f]{12}/.test(id));
  if (!ids.length) return undefined;
  const first = BigInt("0x" + ids.sort()[0].slice(4, 16));
  if (first === 0n) return undefined;
  return "prt_" + (first - 1n).toString(16).padStart(12, "0") + random(14);
}

function contextPart(text, id, message) {
  return { id, sessionID: message.sessionID, messageID: message.id, type: "text", text, synthetic: true, metadata: { [MARK]: true } };
}

export const SupervisePlugin = async () => {
  // what supervise set for the start-up only (its npm install's retries): not for the agent's commands
  for (const name of (process.env.SUPERVISE_HOOK_UNSET || "").split(",").filter(Boolean)) delete process.env[name];
  delete process.env.SUPERVISE_HOOK_UNSET;
  if (!SOCKET) return {};
  const loaded = Date.now();
  open(40);
  const children = new Set(); // a subagent's sessions: what is due is for the user's
  const compacting = new Set(); // sessions whose compaction's own copy of the messages comes next
  const asked = new Map(); // session -> {at, answer}: the last compaction asked about
  const claimed = new Set(); // sessions whose compaction was asked about before its event came
  const waiting = new Map(); // session -> a context not yet in its record

  function compacted(session) {
    const answer = ask({ hook_event_name: "SessionCompacted", source: "compact", session_id: session }).then((context) => {
      if (context) waiting.set(session, context);
    });
    asked.set(session, { at: Date.now(), answer });
    return answer;
  }

  // The first request after a compaction of this run waits for its context (the event that
  // asks for it is not awaited, and may come after the request).
  async function afterCompaction(session, messages) {
    const summary = messages.findLast((m) => m.info.role === "assistant" && m.info.summary === true);
    const made = summary && summary.info.time && summary.info.time.created;
    if (typeof made !== "number" || made < loaded) return;
    const seen = () => asked.has(session) && asked.get(session).at >= made;
    for (let waited = 0; !seen() && waited < EVENT_WAIT_MS; waited += 50) await sleep(50);
    if (!seen()) {
      claimed.add(session);
      compacted(session);
    }
    await asked.get(session).answer;
  }

  return {
    event: async ({ event }) => {
      try {
        const props = (event && event.properties) || {};
        if (event.type === "session.created" || event.type === "session.updated") {
          if (props.info && props.info.parentID) children.add(props.info.id);
        } else if (event.type === "session.compacted" && props.sessionID && !children.has(props.sessionID)) {
          if (!claimed.delete(props.sessionID)) compacted(props.sessionID);
        }
      } catch {
        // a broken side channel never breaks the agent
      }
    },

    "experimental.session.compacting": async (input) => {
      try {
        compacting.add(input.sessionID);
        // a witness of the compaction as it starts (answered at once: nothing is given here)
        await ask({ hook_event_name: "SessionCompacting", source: "precompact", session_id: input.sessionID });
      } catch {
        // nothing to do
      }
    },

    // Every request of the main loop, on a copy of the messages that is not kept: a context
    // not yet in the record goes before the words of the last user message.
    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        const messages = output.messages;
        const session = messages.length ? messages[messages.length - 1].info.sessionID : undefined;
        if (!session || children.has(session)) return;
        if (compacting.delete(session)) return; // the compaction's own request: its summary stays its own
        await afterCompaction(session, messages);
        const text = waiting.get(session);
        const user = text && messages.findLast((m) => m.info.role === "user");
        if (!user || user.parts.some((p) => p.metadata && p.metadata[MARK] && p.text === text)) return;
        user.parts.unshift(contextPart(text, before(user.parts) || "prt_" + "0".repeat(12) + random(14), user.info));
      } catch {
        // nothing added
      }
    },

    // The user sends a message: the context goes with it into the record, before their words
    // (a model answers the last words it is given).
    "chat.message": async (input, output) => {
      try {
        const session = input.sessionID;
        if (children.has(session)) return;
        if (asked.has(session)) await asked.get(session).answer; // a compaction's context on its way
        const due = await ask({ hook_event_name: "ChatMessage", source: "prompt", session_id: session });
        const texts = [waiting.get(session), due].filter(Boolean);
        if (!texts.length) return;
        const id = before(output.parts);
        if (!id) {
          waiting.set(session, texts.join("\n\n")); // the next request takes it, unkept
          return;
        }
        waiting.delete(session);
        // in place: OpenCode keeps the array it passed
        output.parts.unshift(contextPart(texts.join("\n\n"), id, output.message));
      } catch {
        // nothing added
      }
    },
  };
};
