-- Argo CD health check for respawn.dev/v1alpha1 AgentInstance (api.md §2, §5).
-- Install: argocd-cm key `resource.customizations.health.respawn.dev_AgentInstance` (see deploy/README.md).
--   Progressing  no status yet, or the operator has not observed the latest generation, or the agent is
--                between runs or starting (Pending, Starting, Backoff, CircuitOpen, Running but not Ready)
--   Healthy      Ready=True (the pod runs and its heartbeat is fresh), or the agent finished (Succeeded)
--   Suspended    spec.suspend / phase Suspended
--   Degraded     Escalated or Failed: only an operator action continues (`kubectl respawn resume NAME --force`)
local hs = {}

local function condition(status, type)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function message(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return fallback
end

local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Respawn operator to report status"
  return hs
end

local generation = obj.metadata and obj.metadata.generation
if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the Respawn operator to observe generation " .. tostring(generation)
  return hs
end

local phase = status.phase
local ready = condition(status, "Ready")
local escalated = condition(status, "Escalated")

if phase == "Suspended" or (obj.spec ~= nil and obj.spec.suspend == true) then
  hs.status = "Suspended"
  hs.message = "Suspended (spec.suspend)"
  return hs
end

if phase == "Escalated" or phase == "Failed" then
  hs.status = "Degraded"
  hs.message = phase .. ": " .. message(escalated, message(ready, "needs an operator action"))
  return hs
end

if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
  return hs
end

if phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = "Succeeded: the agent exited 0"
  return hs
end

if phase == nil or phase == "Pending" or phase == "Starting" or phase == "Running" or phase == "Backoff"
    or phase == "CircuitOpen" then
  hs.status = "Progressing"
  local recovering = condition(status, "Recovering")
  if phase == "Backoff" or phase == "CircuitOpen" then
    hs.message = phase .. ": " .. message(recovering, "waiting for the next run")
  else
    hs.message = (phase or "Pending") .. ": " .. message(ready, "not Ready yet")
  end
  return hs
end

hs.status = "Unknown"
hs.message = "Unknown phase " .. tostring(phase)
return hs
