// Test guest: a murmur lifecycle hook in JavaScript (componentize-qjs --sync, world `hook`).
// Built by tests/guests/build.py (`build_guest("js_hook")`); never committed as a binary.
// on-inference -> artifact("js"); every other handler -> none.
const none = () => ({ tag: 'none' });

export const lifecycle = {
  onStage: none,
  onSessionStart: none,
  onTaskStart: none,
  onInference(_event) {
    return { tag: 'artifact', val: 'js' };
  },
  onToolCall: none,
  onShell: none,
  onCompaction: none,
  onTaskEnd: none,
  onSessionEnd: none,
};
