-- Cases for health-agentinstance.lua; run with Lua 5.1 (the dialect of Argo CD's gopher-lua):
--   lua5.1 deploy/argocd/health-agentinstance_test.lua   (exit 0 when every case passes)
local dir = (arg and arg[0] or ""):match("^(.*[/\\])") or "./"
local chunk = assert(loadfile(dir .. "health-agentinstance.lua"))
local function run(o)
  local env = setmetatable({obj = o}, {__index = _G})
  setfenv(chunk, env)
  local hs = chunk()
  return hs.status, hs.message
end
local cases = {
  {"nostatus", {metadata = {generation = 1}}, "Progressing"},
  {"stale gen", {metadata = {generation = 2}, status = {observedGeneration = 1, phase = "Running", conditions = {{type = "Ready", status = "True", reason = "Healthy"}}}}, "Progressing"},
  {"ready", {metadata = {generation = 2}, status = {observedGeneration = 2, phase = "Running", conditions = {{type = "Ready", status = "True", reason = "Healthy"}}}}, "Healthy"},
  {"running not ready", {metadata = {generation = 2}, status = {observedGeneration = 2, phase = "Running", conditions = {{type = "Ready", status = "False", reason = "StaleHeartbeat", message = "heartbeat 70s old"}}}}, "Progressing"},
  {"backoff", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "Backoff", conditions = {{type = "Ready", status = "False", reason = "PodNotRunning"}, {type = "Recovering", status = "True", reason = "Backoff", message = "attempt 1 of 3"}}}}, "Progressing"},
  {"circuit", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "CircuitOpen"}}, "Progressing"},
  {"escalated", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "Escalated", conditions = {{type = "Escalated", status = "True", reason = "RestartLimitExceeded", message = "retries exhausted; kubectl logs coder-3"}}}}, "Degraded"},
  {"failed", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "Failed"}}, "Degraded"},
  {"suspended", {metadata = {generation = 3}, spec = {suspend = true}, status = {observedGeneration = 3, phase = "Suspended"}}, "Suspended"},
  {"suspend not observed", {metadata = {generation = 3}, spec = {suspend = true}, status = {observedGeneration = 2, phase = "Running"}}, "Progressing"},
  {"succeeded", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "Succeeded", conditions = {{type = "Ready", status = "False", reason = "Terminal"}}}}, "Healthy"},
  {"pending no gen", {metadata = {}, status = {phase = "Pending"}}, "Progressing"},
  {"weird", {metadata = {generation = 1}, status = {observedGeneration = 1, phase = "Weird"}}, "Unknown"},
}
local bad = 0
for _, c in ipairs(cases) do
  local s, m = run(c[2])
  print(string.format("%-22s %-12s %s", c[1], s, m))
  if s ~= c[3] then bad = bad + 1; print("  EXPECTED " .. c[3]) end
end
os.exit(bad == 0 and 0 or 1)
