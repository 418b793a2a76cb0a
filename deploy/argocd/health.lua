-- Argo CD health check for airunway.ai/ModelDeployment.
--
-- Source of truth: deploy/argocd/health.lua. argocd-cm.yaml is generated
-- from it by `go test ./deploy/argocd -update`.
--
-- The airunway status reporter writes status.observedGeneration and
-- kstatus-style conditions; the Ready condition decides, checked in order:
--
--   no status, or no well-formed Ready condition   Progressing  (reporter
--                                                   absent or not yet run)
--   status older than metadata.generation           Progressing  (it is about
--                                                   an older spec)
--   Ready=True                                      Healthy
--   Stalled=True, or Ready=False with reason
--     DeploymentFailed or ProviderCRDMissing        Degraded
--   Ready=Unknown (ProviderStale, ...)              Unknown
--   Ready=False otherwise (Reconciling:
--     DeploymentInProgress, ResourceNotFound)       Progressing
--
-- The message is that of the deciding condition (Stalled's for Stalled).
-- A field of the wrong type counts as absent, so no object makes the script
-- fail. Only the base and table libraries are used: argocd-cm scripts run
-- without string, math and the rest unless useOpenLibs is set.

-- field returns t[key], or nil when t is not a table.
local function field(t, key)
  if type(t) == "table" then
    return t[key]
  end
  return nil
end

local function ofType(v, want)
  if type(v) == want then
    return v
  end
  return nil
end

-- condition returns the first condition of the given type whose status is
-- True, False or Unknown; anything else is ignored.
local function condition(conditions, kind)
  if type(conditions) ~= "table" then
    return nil
  end
  for _, c in ipairs(conditions) do
    if field(c, "type") == kind then
      local s = field(c, "status")
      if s == "True" or s == "False" or s == "Unknown" then
        return c
      end
    end
  end
  return nil
end

local function messageOf(c, fallback)
  return ofType(field(c, "message"), "string") or ofType(field(c, "reason"), "string") or fallback
end

local function assess(o)
  local status = field(o, "status")
  local conditions = field(status, "conditions")
  local ready = condition(conditions, "Ready")
  if ready == nil then
    return {
      status = "Progressing",
      message = "Waiting for the airunway status reporter to set the Ready condition; it may not be installed",
    }
  end

  local generation = ofType(field(field(o, "metadata"), "generation"), "number")
  if generation ~= nil then
    local seen = ofType(field(status, "observedGeneration"), "number")
    local readySeen = ofType(field(ready, "observedGeneration"), "number")
    if readySeen ~= nil and (seen == nil or readySeen < seen) then
      seen = readySeen
    end
    if seen ~= nil and seen < generation then
      return {
        status = "Progressing",
        message = "Waiting for the status of generation " .. generation .. " (the status is for generation " .. seen .. ")",
      }
    end
  end

  local message = messageOf(ready, "")
  if ready.status == "True" then
    return {status = "Healthy", message = message}
  end

  local stalled = condition(conditions, "Stalled")
  if stalled ~= nil and stalled.status == "True" then
    return {status = "Degraded", message = messageOf(stalled, message)}
  end
  if ready.status == "False" and (ready.reason == "DeploymentFailed" or ready.reason == "ProviderCRDMissing") then
    return {status = "Degraded", message = message}
  end
  if ready.status == "Unknown" then
    return {status = "Unknown", message = message}
  end
  return {status = "Progressing", message = message}
end

return assess(obj)
