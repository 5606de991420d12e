// An ACP client on the protocol's own npm SDK, driving `rein acp` for the tests in
// crates/cli/tests/acp.rs. argv[2] is a JSON plan: { rein, args, cwd, env, scenario,
// answers, buffers, prompt, loadSession, pidFile }. It prints one JSON report on stdout:
// what rein sent (updates, permission and file requests) and how each prompt ended.

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const plan = JSON.parse(process.argv[2]);
const report = {
  updates: [],
  permissions: [],
  reads: [],
  writes: [],
  stops: [],
  sessions: [],
  errors: [],
};
const buffers = { ...(plan.buffers ?? {}) };
const answers = [...(plan.answers ?? [])];
const waiters = [];

const child = spawn(plan.rein, ["acp", ...(plan.args ?? [])], {
  cwd: plan.cwd,
  env: plan.env,
  stdio: ["pipe", "pipe", "inherit"],
});
report.pid = child.pid;
const exited = new Promise((resolve) =>
  child.on("exit", (code, signal) => resolve({ code, signal })),
);
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

// Resolves once an update satisfying `test` has arrived.
function updateWhere(test) {
  const seen = report.updates.find(test);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => waiters.push({ test, resolve }));
}

async function waitForFile(path) {
  const deadline = Date.now() + 30000;
  while (!existsSync(path) || readFileSync(path, "utf8").trim() === "") {
    if (Date.now() > deadline) throw new Error(`no ${path} after 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return readFileSync(path, "utf8").trim();
}

const app = client()
  .onNotification("session/update", ({ params }) => {
    report.updates.push(params);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].test(params)) {
        waiters[i].resolve(params);
        waiters.splice(i, 1);
      }
    }
  })
  .onRequest("session/request_permission", ({ params }) => {
    report.permissions.push(params);
    const answer = answers.shift() ?? "reject";
    return { outcome: { outcome: "selected", optionId: answer } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    report.reads.push(params.path);
    if (!(params.path in buffers)) {
      return { content: readFileSync(params.path, "utf8") };
    }
    return { content: buffers[params.path] };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    report.writes.push(params.path);
    buffers[params.path] = params.content;
    return {};
  });

const text = (t) => [{ type: "text", text: t }];

await app.connectWith(stream, async (cx) => {
  const init = await cx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: !!plan.buffers, writeTextFile: !!plan.buffers },
      terminal: false,
    },
  });
  report.initialize = init;
  const open = async () => {
    if (plan.loadSession) {
      const loaded = await cx.request("session/load", {
        sessionId: plan.loadSession,
        cwd: plan.cwd,
        mcpServers: [],
      });
      report.sessions.push({ sessionId: plan.loadSession, ...loaded });
      return plan.loadSession;
    }
    const created = await cx.request("session/new", {
      cwd: plan.cwd,
      mcpServers: plan.mcpServers ?? [],
    });
    report.sessions.push(created);
    return created.sessionId;
  };
  const prompt = async (sessionId, words) => {
    const done = await cx.request("session/prompt", { sessionId, prompt: text(words) });
    report.stops.push({ sessionId, stopReason: done.stopReason });
    return done;
  };

  switch (plan.scenario) {
    case "prompt": {
      // One session, one prompt (the permission answers come from plan.answers).
      const id = await open();
      if (plan.mode) await cx.request("session/set_mode", { sessionId: id, modeId: plan.mode });
      if (plan.blocks) {
        const done = await cx.request("session/prompt", { sessionId: id, prompt: plan.blocks });
        report.stops.push({ sessionId: id, stopReason: done.stopReason });
      } else if (plan.prompt) {
        await prompt(id, plan.prompt);
      }
      break;
    }
    case "cancel": {
      // The turn runs a long command; once it runs, session/cancel; then the session
      // must still take a prompt.
      const id = await open();
      await cx.request("session/set_mode", { sessionId: id, modeId: "yolo" });
      const running = prompt(id, plan.prompt);
      await updateWhere(
        (u) => u.update.sessionUpdate === "tool_call" && u.update.kind === "execute",
      );
      report.commandPid = await waitForFile(plan.pidFile);
      await cx.notify("session/cancel", { sessionId: id });
      await running;
      await prompt(id, "are you still there?");
      break;
    }
    case "two": {
      // Two sessions in one process, prompted at once.
      const a = await open();
      const b = await open();
      await Promise.all([prompt(a, "first session"), prompt(b, "second session")]);
      break;
    }
    case "commands": {
      // Waits until the advertised commands include plan.waitFor (an MCP prompt joins once
      // its server is ready), then sends each of plan.prompts in turn.
      const id = await open();
      await updateWhere(
        (u) =>
          u.update.sessionUpdate === "available_commands_update" &&
          u.update.availableCommands.some((c) => c.name === plan.waitFor),
      );
      for (const words of plan.prompts) await prompt(id, words);
      break;
    }
    case "modes": {
      // A prompt in each of plan.modes in turn (the first in the session's own mode).
      const id = await open();
      await prompt(id, plan.prompt);
      for (const modeId of plan.modes) {
        await cx.request("session/set_mode", { sessionId: id, modeId });
        await prompt(id, plan.prompt);
      }
      break;
    }
    case "bad-mode": {
      const id = await open();
      try {
        await cx.request("session/set_mode", { sessionId: id, modeId: "reckless" });
      } catch (e) {
        report.errors.push({ code: e.code, message: e.message, data: e.data });
      }
      await prompt(id, plan.prompt);
      break;
    }
    default:
      throw new Error(`unknown scenario ${plan.scenario}`);
  }
});

report.buffers = buffers;
child.stdin.end();
report.exit = await exited;
process.stdout.write(JSON.stringify(report) + "\n");
