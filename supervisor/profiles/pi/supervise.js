// supervise's door into pi, loaded for one run with `pi -e` (the user's own extensions load
// too). Once loaded it tells supervise the door is open; after pi compacts it asks for the
// session's context and adds it to pi's next model request, and before each of the user's
// prompts it asks for whatever is due (a resumed session's context, a brief, a context that
// was not ready when the compaction ended). It asks over the Unix socket named in
// SUPERVISE_HOOK_SOCKET; the context goes into pi's session as a message of its own, not
// shown, before the user's next words: nothing is typed. Whatever goes wrong, it adds nothing.
import net from "node:net";

const SOCKET = process.env.SUPERVISE_HOOK_SOCKET;
const WAIT_MS = Number(process.env.SUPERVISE_HOOK_TIMEOUT || "45") * 1000;
const KIND = "supervise-context";

// The context supervise answers `request` with ("" for none); null when it could not be asked.
function ask(request) {
  return new Promise((resolve) => {
    if (!SOCKET) return resolve(null);
    let data = "";
    let done = false;
    const finish = (context) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(context === null || typeof context === "string" ? context : "");
    };
    const conn = net.createConnection(SOCKET);
    const timer = setTimeout(() => finish(""), WAIT_MS);
    conn.on("connect", () => conn.end(JSON.stringify(request) + "\n"));
    conn.on("data", (chunk) => (data += chunk));
    conn.on("end", () => {
      try {
        finish(JSON.parse(data).context);
      } catch {
        finish("");
      }
    });
    conn.on("error", () => finish(null));
  });
}

function sessionOf(ctx) {
  try {
    return ctx.sessionManager.getSessionId();
  } catch {
    return undefined;
  }
}

// Tell supervise the door is open; its recorder may still be starting, so try for a while.
async function open(tries) {
  for (let i = 0; i < tries; i++) {
    if ((await ask({ hook_event_name: "Loaded", source: "open" })) !== null) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export default function (pi) {
  if (!SOCKET) return;
  open(40);

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
