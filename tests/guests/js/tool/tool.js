// Test guest: a murmur tool in JavaScript (componentize-qjs --sync, world `tool`).
// Built by tests/guests/build.py (`build_guest("js_tool")`); never committed as a binary.
// tool-input.data is JSON {"op": ...}:
//   echo -> passed, data = the input JSON (keys sorted), metadata [["log_path", ...]]
//   ask  -> request-input(input.prompt); passed, data = the answer
//   fail -> failed, data "asked to fail"
//   anything else -> error, with a message
import { requestInput } from 'murmur:task/task@0.1.0';

function result(status, data, summary, metadata) {
  return {
    status,
    summary,
    data,
    dataPath: undefined,
    truncated: false,
    metadata: metadata ?? [],
    attachments: [],
  };
}

function sortedJson(value) {
  const keys = Object.keys(value).sort();
  const out = {};
  for (const k of keys) out[k] = value[k];
  return JSON.stringify(out);
}

function error(message) {
  return result('error', message, message);
}

export const run = {
  run(input) {
    let args;
    try {
      args = JSON.parse(input.data ?? '');
    } catch (e) {
      return error(`input is not JSON: ${e}`);
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return error('input is not a JSON object');
    }
    switch (args.op) {
      case 'echo':
        return result('passed', sortedJson(args), 'echo', [['log_path', input.logPath ?? '']]);
      case 'ask':
        return result('passed', requestInput(String(args.prompt ?? '')), 'asked');
      case 'fail':
        return result('failed', 'asked to fail', 'failed');
      default:
        return error(`unknown op: ${JSON.stringify(args.op ?? null)}`);
    }
  },
};
