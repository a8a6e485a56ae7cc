// How a door of supervise's written in JavaScript (pi's extension, OpenCode's and Kilo's plugin)
// asks supervise: one JSON request over the Unix socket named in SUPERVISE_HOOK_SOCKET, one
// JSON answer back. Copied beside the door for its run. It imports nothing it would have to
// install, and whatever goes wrong, it answers nothing rather than throw.
import net from "node:net";

export const SOCKET = process.env.SUPERVISE_HOOK_SOCKET;
const WAIT_MS = Number(process.env.SUPERVISE_HOOK_TIMEOUT || "45") * 1000;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The context supervise answers `request` with ("" for none); null when it could not be asked.
export function ask(request) {
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
    const answered = () => {
      try {
        finish(JSON.parse(data).context);
      } catch {
        finish("");
      }
    };
    const conn = net.createConnection(SOCKET);
    const timer = setTimeout(() => finish(""), WAIT_MS);
    // the request is one line, and so is the answer: no half-close (Bun's end() closes both ways)
    conn.on("connect", () => conn.write(JSON.stringify(request) + "\n"));
    conn.on("data", (chunk) => {
      data += chunk;
      if (data.includes("\n")) answered();
    });
    conn.on("end", answered);
    conn.on("error", () => finish(null));
  });
}

// Tell supervise the door is open; its recorder may still be starting, so try for a while.
export async function open(tries) {
  for (let i = 0; i < tries; i++) {
    if ((await ask({ hook_event_name: "Loaded", source: "open" })) !== null) return;
    await sleep(250);
  }
}
