// supervise's door into Cline CLI: a plugin the user installs once (`supervise hooks install
// cline` has `cline plugin install` copy it into ~/.cline/plugins). Cline runs it in a sandbox
// process of its own and gives each hook 3 s, so nothing here waits long. Once set up it tells
// supervise the door is open. As each run of the user's starts (`beforeRun`) it asks for
// whatever is due (a compaction's context, a resumed session's, a brief) and hands it to Cline,
// which adds it after the user's words as a `<hook_context>` message of its own, kept in its
// session. A compaction inside a run (automatic) is seen as it starts (a status notice) and
// once done (the request's first message is a new compaction): its context goes into that
// run's next requests, after the compaction's summary. It asks over the Unix socket named in
// SUPERVISE_HOOK_SOCKET (supervise-ask.js, installed beside it); outside supervise it does
// nothing, and whatever goes wrong, it adds nothing: a broken side channel never breaks the agent.
import { SOCKET, ask } from "./supervise-ask.js";

const HOOK_MS = 2000; // the most a hook waits for an answer (Cline gives it 3 s)
const COMPACTED = new Set(["compaction", "compaction_summary"]); // a compacted view's first message
const TRIGGERS = { manual_compaction: "manual", auto_compaction: "auto", overflow_recovery_compaction: "auto" };

// `promise`, or undefined once `ms` have passed (it goes on: what it brings is kept).
const within = (promise, ms) => Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);

const waiting = []; // contexts answered, not yet given to the model
let pending = null; // an ask whose answer goes to `waiting` whenever it comes
let started = false; // the first run of this process asked for a start's context
const seen = new Set(); // compactions (their first message's id) asked about
let anchored = null; // {id, text}: a context that goes after that compaction's summary in each request

function keep(request) {
  const answer = ask(request).then((context) => {
    if (context) waiting.push(context);
  });
  pending = answer.finally(() => {
    if (pending === answer) pending = null;
  });
  return pending;
}

const first = (messages) => (Array.isArray(messages) && messages.length ? messages[0] : undefined);
const conversation = (snapshot) => (snapshot && snapshot.conversationId) || undefined;

const plugin = {
  name: "supervise",
  manifest: { capabilities: ["hooks"] },

  setup() {
    try {
      if (SOCKET) ask({ hook_event_name: "Loaded", source: "open" });
    } catch {
      // nothing to do
    }
  },

  hooks: {
    // A run of the user's starts: what is due goes with their words (kept in its session).
    async beforeRun({ snapshot }) {
      try {
        if (!SOCKET) return undefined;
        const session = conversation(snapshot);
        const head = first(snapshot && snapshot.messages);
        if (head && head.id) seen.add(head.id); // a compaction before this run: `prompt` gives its context
        if (!started) {
          started = true;
          keep({ hook_event_name: "SessionStart", source: "startup", session_id: session });
        }
        if (pending) await within(pending, HOOK_MS);
        const due = await within(ask({ hook_event_name: "UserPromptSubmit", source: "prompt", session_id: session }), HOOK_MS);
        if (due) waiting.push(due);
        if (!waiting.length) return undefined;
        return { appendContext: waiting.splice(0).join("\n\n") };
      } catch {
        return undefined;
      }
    },

    // Each request: after a compaction inside the run, its context follows the summary.
    async beforeModel({ snapshot, request }) {
      try {
        if (!SOCKET) return undefined;
        const messages = request && request.messages;
        const head = first(messages);
        const kind = head && head.metadata && head.metadata.kind;
        if (head && head.id && COMPACTED.has(kind) && !seen.has(head.id)) {
          seen.add(head.id);
          const trigger = TRIGGERS[head.metadata.reason] || "auto";
          keep({ hook_event_name: "PostCompact", source: "compact", trigger, session_id: conversation(snapshot) });
        }
        if (pending) await within(pending, HOOK_MS);
        if (waiting.length && head && head.id) anchored = { id: head.id, text: waiting.splice(0).join("\n\n") };
        if (!anchored || !head || head.id !== anchored.id) return undefined;
        const context = { role: "user", content: [{ type: "text", text: anchored.text }], metadata: { displayRole: "system" } };
        return { messages: [head, context, ...messages.slice(1)] };
      } catch {
        return undefined;
      }
    },

    // A compaction inside a run begins: a witness, answered at once.
    onEvent(event) {
      try {
        const meta = (event && event.type === "status-notice" && event.metadata) || {};
        if (SOCKET && meta.phase === "started" && TRIGGERS[meta.reason]) {
          ask({ hook_event_name: "PreCompact", source: "precompact", trigger: TRIGGERS[meta.reason] });
        }
      } catch {
        // nothing to do
      }
    },
  },
};

export default plugin;
