// supervise's door into pi, loaded for one run with `pi -e` (the user's own extensions load
// too). Once loaded it tells supervise the door is open; after pi compacts it asks for the
// session's context and adds it to pi's next model request, and before each of the user's
// prompts it asks for whatever is due (a resumed session's context, a brief, a context that
// was not ready when the compaction ended). It asks over the Unix socket named in
// SUPERVISE_HOOK_SOCKET (supervise-ask.js, copied beside it); the context goes into pi's
// session as a message of its own, not shown, before the user's next words: nothing is
// typed. Whatever goes wrong, it adds nothing.
import { SOCKET, ask, open } from "./supervise-ask.js";

const KIND = "supervise-context";

function sessionOf(ctx) {
  try {
    return ctx.sessionManager.getSessionId();
  } catch {
    return undefined;
  }
}

export default function (pi) {
  if (!SOCKET) return;
  open(40);

  pi.on("session_before_compact", async (_event, ctx) => {
    // a witness of the compaction as it starts (answered at once); it returns nothing, as
    // something returned here could cancel the compaction
    await ask({ hook_event_name: "SessionBeforeCompact", source: "precompact", session_id: sessionOf(ctx) });
  });

  pi.on("session_compact", async (event, ctx) => {
    try {
      const entry = (event && event.compactionEntry) || {};
      const context = await ask({
        hook_event_name: "SessionCompact",
        source: "compact",
        session_id: sessionOf(ctx),
        summary: typeof entry.summary === "string" ? entry.summary : undefined,
      });
      if (context) pi.sendMessage({ customType: KIND, content: context, display: false });
    } catch {
      // a broken side channel never breaks the agent
    }
  });

  pi.on("before_agent_start", async (_event, ctx) => {
    try {
      const context = await ask({ hook_event_name: "BeforeAgentStart", source: "prompt", session_id: sessionOf(ctx) });
      // sent now, it goes before the user's prompt (a message returned here would go after it,
      // and a model answers the last message)
      if (context) pi.sendMessage({ customType: KIND, content: context, display: false });
    } catch {
      // nothing to add
    }
  });
}
