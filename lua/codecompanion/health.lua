-- :checkhealth codecompanion
local M = {}

-- Python's None arrives as vim.NIL.
local function val(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

local function version_ok()
  local v = vim.version()
  return v.major > 0 or v.minor >= 10, ("%d.%d.%d"):format(v.major, v.minor, v.patch)
end

function M.check()
  local health = vim.health
  local host = require("codecompanion.host")
  health.start("codecompanion")
  local ok, version = version_ok()
  if ok then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old: 0.10 or newer is needed")
  end
  local python = host.python()
  if vim.fn.executable(python) == 1 then
    health.ok("host Python: " .. python)
  else
    health.error("no Python at " .. python, { "run `make install` in " .. host.root() })
    return
  end
  for _, tool in ipairs({ "rg", "git" }) do
    if vim.fn.executable(tool) == 1 then
      health.ok(tool .. " found")
    else
      health.warn(
        tool .. " not found",
        tool == "rg" and { "grep_search falls back to a slower Python search" } or nil
      )
    end
  end
  local report, err = host.request("health", {})
  if not report or report.error then
    health.error(
      "host not answering: " .. tostring(err or report.error),
      { "log: " .. host.log_path() }
    )
    return
  end
  health.ok(("host alive (python %s, pid %s)"):format(report.python, report.pid))
  for _, dep in ipairs(report.dependencies or {}) do
    if val(dep.version) then
      health.ok(("%s %s"):format(dep.name, dep.version))
    else
      health.error(dep.name .. " missing", { "run `make install` in " .. host.root() })
    end
  end
  for _, plugin in ipairs(report.plugins or {}) do
    health.ok("plugin " .. plugin)
  end
  for _, problem in ipairs(report.plugin_errors or {}) do
    health.warn(problem)
  end
  if val(report.tls) then
    health.ok("TLS certificates: " .. report.tls)
  end
  local config_file = val(report.config_file) or require("codecompanion.config").config_file()
  if val(report.config_error) then
    health.error(
      "config file broken: " .. report.config_error,
      { "fix it, then :CodeCompanionReload" }
    )
  elseif not vim.uv.fs_stat(config_file) then
    health.info(
      ("no config file at %s: the defaults apply (see :help codecompanion-config)"):format(
        config_file
      )
    )
  else
    health.ok("config file: " .. config_file)
  end
  if val(report.adapter) then
    local line = ("adapter: %s (model %s)"):format(report.adapter, val(report.model) or "default")
    if report.key_ok then
      health.ok(line .. ", key resolves")
    else
      health.warn(line .. ": " .. (val(report.key_problem) or "key does not resolve"))
    end
  else
    health.warn("no adapter configured: the chat uses the offline demo", {
      "set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, start Ollama,"
        .. " or set `adapter` in codecompanion.py",
    })
  end
  local servers = report.mcp or {}
  if #servers > 0 then
    health.start("codecompanion: MCP servers")
    for _, server in ipairs(servers) do
      local line = ("%s (%s): %s"):format(server.name, server.transport, server.state)
      if server.state == "running" then
        health.ok(("%s, %d tools"):format(line, server.tools))
      elseif server.state == "failed" or server.state == "crashed" then
        health.warn(line .. (val(server.error) and (": " .. server.error) or ""))
      else
        health.info(line)
      end
    end
  end
  health.info("log: " .. host.log_path())
end

return M
